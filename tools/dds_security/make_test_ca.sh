#!/bin/bash
# A test certificate authority for the message bridge's DDS Security
# (docs/network.md, "Authenticated forwarding"): CA certificates, each
# node's certificate and key, and the signed governance and permissions
# documents Cyclone DDS's security plugins read.
#
#   tools/dds_security/make_test_ca.sh [--days=N] DIR NODE...
#
# DIR must be empty or not exist yet. It gets, for --dds_security=DIR:
#   DIR/identity_ca.pem       the identity CA's certificate (authentication)
#   DIR/permissions_ca.pem    the permissions CA's certificate (access control)
#   DIR/governance.p7s        the domain rules, signed by the permissions CA:
#                             domains 0-230, no unauthenticated participants,
#                             every RTPS message encrypted and authenticated
#   DIR/NODE/identity.pem     NODE's certificate (subject CN=NODE,O=aos),
#   DIR/NODE/identity_key.pem its private key (EC P-256, unencrypted),
#   DIR/NODE/permissions.p7s  what NODE may do (publish and subscribe any
#                             topic in domains 0-230), signed
#   DIR/private/              the CAs' keys and the unsigned documents
# Permissions are valid from yesterday, certificates from now, for --days (default
# 3650). Each run makes new CAs: nodes of two runs do not trust each other.
# Needs openssl(1). For tests and trying it out: keys are not encrypted and
# the CAs' keys sit beside them; a real deployment keeps DIR/private off the
# robot and gives each machine only its own NODE directory and the three
# shared files.
set -euo pipefail

usage() { sed -n '2,/^set /s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
fail() {
  echo "make_test_ca.sh: $*" >&2
  exit 1
}

days=3650
args=()
for arg in "$@"; do
  case "${arg}" in
    -h | --help)
      usage
      exit 0
      ;;
    --days=*) days="${arg#--days=}" ;;
    --*) fail "unknown flag '${arg}' (try --help)" ;;
    *) args+=("${arg}") ;;
  esac
done
[[ ${#args[@]} -ge 2 ]] || fail "give a directory and at least one node (try --help)"
[[ "${days}" =~ ^[1-9][0-9]{0,4}$ ]] || fail "--days=${days}: give a whole number of days, 1-99999"
readonly dir="${args[0]}"
readonly nodes=("${args[@]:1}")
for node in "${nodes[@]}"; do
  # A node's name goes into a certificate subject and a path.
  [[ "${node}" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$ ]] ||
    fail "node name '${node}': use letters, digits, '_', '.' and '-' (at most 64, not starting with '.' or '-')"
done
command -v openssl >/dev/null || fail "openssl is missing: apt-get install openssl"
if [[ -e "${dir}" ]]; then
  [[ -d "${dir}" ]] || fail "${dir} is not a directory"
  [[ -z "$(ls -A "${dir}")" ]] || fail "${dir} is not empty: give a new or empty directory"
fi
mkdir -p "${dir}/private"
readonly private="${dir}/private"
log_file="${private}/openssl.log"
: >"${log_file}"
# Every openssl call: its chatter goes to the log, and a failure says which
# step failed with openssl's last line.
run() {
  local what="$1"
  shift
  if ! openssl "$@" >>"${log_file}" 2>&1; then
    fail "openssl failed to ${what}: $(tail -n 1 "${log_file}")"
  fi
}

# ISO 8601 times for the permissions' validity, as the certificates'.
not_before="$(date -u -d '1 day ago' +%Y-%m-%dT%H:%M:%S)"
not_after="$(date -u -d "${days} days" +%Y-%m-%dT%H:%M:%S)"
# Each run's CAs have a name of their own.
run_id="$(openssl rand -hex 4)"

ca_extensions="${private}/ca.ext"
leaf_extensions="${private}/leaf.ext"
printf '%s\n' "basicConstraints=critical,CA:TRUE" "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
  "subjectKeyIdentifier=hash" >"${ca_extensions}"
printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyAgreement" \
  "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" >"${leaf_extensions}"

make_key() {  # OUT
  run "make the key $1" genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"
  chmod 600 "$1"
}

make_ca() {  # NAME (identity|permissions)
  local name="$1"
  make_key "${private}/${name}_ca_key.pem"
  run "make the ${name} CA" req -x509 -new -key "${private}/${name}_ca_key.pem" \
    -subj "/O=aos/CN=aos test ${name} CA ${run_id}" -days "${days}" \
    -set_serial "0x$(openssl rand -hex 8)" -extensions v3 \
    -config <(printf '%s\n' "[req]" "distinguished_name=dn" "[dn]" "[v3]" \
      "$(cat "${ca_extensions}")") \
    -out "${dir}/${name}_ca.pem"
}

sign_document() {  # XML P7S
  run "sign $2" smime -sign -text -in "$1" -out "$2" \
    -signer "${dir}/permissions_ca.pem" -inkey "${private}/permissions_ca_key.pem"
}

readonly domains="<domains><id_range><min>0</min><max>230</max></id_range></domains>"

make_ca identity
make_ca permissions

cat >"${private}/governance.xml" <<GOVERNANCE
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      ${domains}
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>ENCRYPT</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>NONE</metadata_protection_kind>
          <data_protection_kind>NONE</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
GOVERNANCE
sign_document "${private}/governance.xml" "${dir}/governance.p7s"

for node in "${nodes[@]}"; do
  out="${dir}/${node}"
  mkdir -p "${out}"
  make_key "${out}/identity_key.pem"
  run "make ${node}'s certificate request" req -new -key "${out}/identity_key.pem" \
    -subj "/O=aos/CN=${node}" -config <(printf '%s\n' "[req]" "distinguished_name=dn" "[dn]") \
    -out "${private}/${node}.csr"
  run "sign ${node}'s certificate" x509 -req -in "${private}/${node}.csr" \
    -CA "${dir}/identity_ca.pem" -CAkey "${private}/identity_ca_key.pem" \
    -set_serial "0x$(openssl rand -hex 8)" -days "${days}" -extfile "${leaf_extensions}" \
    -out "${out}/identity.pem"
  # The subject exactly as the access control plugin compares it.
  subject="$(openssl x509 -noout -subject -nameopt RFC2253 -in "${out}/identity.pem")"
  subject="${subject#subject=}"
  cat >"${private}/${node}_permissions.xml" <<PERMISSIONS
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="aos_${node}">
      <subject_name>${subject}</subject_name>
      <validity>
        <not_before>${not_before}</not_before>
        <not_after>${not_after}</not_after>
      </validity>
      <allow_rule>
        ${domains}
        <publish><topics><topic>*</topic></topics><partitions><partition>*</partition></partitions></publish>
        <subscribe><topics><topic>*</topic></topics><partitions><partition>*</partition></partitions></subscribe>
      </allow_rule>
      <default>DENY</default>
    </grant>
  </permissions>
</dds>
PERMISSIONS
  sign_document "${private}/${node}_permissions.xml" "${out}/permissions.p7s"
done
echo "make_test_ca.sh: CA ${run_id} and ${nodes[*]} in ${dir}" >&2
