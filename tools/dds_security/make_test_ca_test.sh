#!/bin/bash
# make_test_ca.sh makes what Cyclone DDS's security plugins check: node
# certificates the identity CA signed, documents the permissions CA signed,
# permissions granted to each certificate's exact subject; and it refuses
# bad arguments in one line, before it writes anything.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
script="${root}/tools/dds_security/make_test_ca.sh"

bash "${script}" --help >"${tmp}/out" 2>"${tmp}/err" || fail "--help failed"
grep -q 'make_test_ca.sh \[--days=N\] DIR NODE' "${tmp}/out" ||
  fail "--help does not show the usage: $(cat "${tmp}/out")"

ca="${tmp}/ca"
bash "${script}" "${ca}" pi1 pi2 >"${tmp}/out" 2>"${tmp}/err" ||
  fail "making a CA failed: $(cat "${tmp}/err")"
for file in identity_ca.pem permissions_ca.pem governance.p7s \
  pi1/identity.pem pi1/identity_key.pem pi1/permissions.p7s \
  pi2/identity.pem pi2/identity_key.pem pi2/permissions.p7s; do
  [[ -s "${ca}/${file}" ]] || fail "${file} is missing"
done
for node in pi1 pi2; do
  openssl verify -CAfile "${ca}/identity_ca.pem" "${ca}/${node}/identity.pem" \
    >/dev/null 2>&1 || fail "${node}'s certificate does not verify"
  openssl smime -verify -in "${ca}/${node}/permissions.p7s" \
    -CAfile "${ca}/permissions_ca.pem" -out "${tmp}/${node}.xml" 2>/dev/null ||
    fail "${node}'s permissions are not signed by the permissions CA"
  grep -q "<subject_name>CN=${node},O=aos</subject_name>" "${tmp}/${node}.xml" ||
    fail "${node}'s permissions are not for its subject"
  [[ "$(stat -c %a "${ca}/${node}/identity_key.pem")" == 600 ]] ||
    fail "${node}'s key is readable by others"
done
openssl smime -verify -in "${ca}/governance.p7s" -CAfile "${ca}/permissions_ca.pem" \
  -out "${tmp}/governance.xml" 2>/dev/null || fail "the governance is not signed"
grep -q '<allow_unauthenticated_participants>false' "${tmp}/governance.xml" ||
  fail "the governance allows unauthenticated participants"
grep -q '<rtps_protection_kind>ENCRYPT<' "${tmp}/governance.xml" ||
  fail "the governance does not encrypt"

# A second CA is another one: its certificates do not verify with the first.
bash "${script}" "${tmp}/other" pi1 2>/dev/null || fail "a second CA failed"
! openssl verify -CAfile "${ca}/identity_ca.pem" "${tmp}/other/pi1/identity.pem" \
  >/dev/null 2>&1 || fail "a second CA's certificate verifies with the first"

check_refused() {  # WHAT ARGS...
  local what="$1"
  shift
  bash "${script}" "$@" >"${tmp}/out" 2>"${tmp}/err"
  local status=$?
  [[ ${status} == 1 ]] || fail "$* exited ${status}, want 1"
  grep -q -- "${what}" "${tmp}/err" ||
    fail "$*: the message does not say ${what}: $(cat "${tmp}/err")"
  [[ $(wc -l <"${tmp}/err") == 1 ]] || fail "$*: more than one line"
}
check_refused "is not empty" "${ca}" pi3
check_refused "node name 'a,b'" "${tmp}/new1" 'a,b'
check_refused "give a directory and at least one node" "${tmp}/new2"
check_refused "--days=0" --days=0 "${tmp}/new3" pi1
check_refused "unknown flag '--day=3'" --day=3 "${tmp}/new4" pi1
[[ ! -e "${tmp}/new1" && ! -e "${tmp}/new3" ]] || fail "a refused run wrote files"

finish
