#ifndef AOS_NETWORK_DDS_SECURITY_H_
#define AOS_NETWORK_DDS_SECURITY_H_

// DDS Security for the message bridge: the files one node's DDS participant
// authenticates, is authorised and encrypts with (Cyclone DDS's built-in
// plugins, OMG DDS Security 1.1), checked before Cyclone reads them so that
// a bad one is named in one line instead of in Cyclone's trace.
//
//   DdsSecurityFiles files = DdsSecurityFiles::InDirectory(
//       "/etc/aos/dds", "pi1", "--dds_security=/etc/aos/dds");
//   absl::StatusOr<DdsSecurityInfo> info = CheckDdsSecurityFiles(files);
//   if (!info.ok()) ExitForUserError(info.status().message());
//   dds_qos_t* qos = dds_create_qos();
//   SetDdsSecurityProperties(files, qos);   // then dds_create_participant
//
// A participant made so talks only to participants whose certificate the
// same identity CA signed and whose permissions the same permissions CA
// signed; what it protects on the wire is what the governance document says
// (tools/dds_security/make_test_ca.sh writes one that encrypts and
// authenticates every RTPS message). docs/network.md, "Authenticated
// forwarding", has the threat model.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "dds/dds.h"

namespace aos::message_bridge {

struct DdsSecurityFiles {
  // Where the paths came from, named first in every error line (a flag:
  // "--dds_security=/etc/aos/dds").
  std::string source;
  // PEM X.509 certificate of the identity CA, which signed every node's
  // identity certificate.
  std::string identity_ca;
  // This node's PEM X.509 certificate, and its PEM private key (not
  // encrypted: Cyclone's password property is not used).
  std::string identity_certificate;
  std::string private_key;
  // PEM X.509 certificate of the permissions CA, which signed the two
  // documents below (S/MIME, as `openssl smime -sign -text` writes).
  std::string permissions_ca;
  // The domain's rules (which protection every participant applies) and
  // this node's permissions (which topics it may publish and subscribe,
  // granted to its certificate's subject).
  std::string governance;
  std::string permissions;
  // The directory holding Cyclone's plugins libdds_security_auth.so,
  // libdds_security_ac.so and libdds_security_crypto.so, and where that came
  // from (a flag, or "the default").
  std::string plugin_dir;
  std::string plugin_source;

  // The layout tools/dds_security/make_test_ca.sh writes: dir/identity_ca.pem,
  // dir/permissions_ca.pem, dir/governance.p7s and, for `node`,
  // dir/<node>/identity.pem, identity_key.pem and permissions.p7s. The
  // plugins are looked for in DefaultDdsSecurityPluginDir().
  static DdsSecurityFiles InDirectory(std::string_view dir,
                                      std::string_view node,
                                      std::string_view source);
};

// What checked files say, for the line that tells a user security is on.
struct DdsSecurityInfo {
  // The identity certificate's subject (RFC 2253: "CN=pi1,O=aos").
  std::string subject;
  // Every rtps_protection_kind and allow_unauthenticated_participants the
  // governance document gives, over all its domain rules (one each for
  // make_test_ca.sh's), in order, without repeats, joined by "/".
  std::string rtps_protection;
  std::string unauthenticated;

  // "authenticated, encrypted", or what is missing of it
  // ("unauthenticated participants allowed", "signed, not encrypted",
  // "RTPS messages not protected"), then the details in parentheses.
  std::string Describe() const;
};

// Checks `files` as Cyclone's plugins will, and a little more, so that what
// would fail is named: every file is a readable regular file of at most
// 1 MiB; the three certificates are PEM X.509; the key is a PEM private key
// (not encrypted) of the identity certificate; the identity certificate
// chains to the identity CA and is valid now; the governance and permissions
// documents are S/MIME signed by the permissions CA; the permissions grant
// something to the certificate's subject; each plugin loads and has its
// init function. Fails with one line: the source, the file and its role,
// what is wrong (text from the files escaped with aos::Printable). Reads
// files and loads the plugins for a moment; allocates.
absl::StatusOr<DdsSecurityInfo> CheckDdsSecurityFiles(
    const DdsSecurityFiles& files);

// Sets `files` as the dds.sec.* properties of a participant's QoS (absolute
// "file:" URIs, the plugins by path): a participant made with it runs the
// three built-in plugins.
void SetDdsSecurityProperties(const DdsSecurityFiles& files, dds_qos_t* qos);

// Where Debian puts Cyclone's security plugins: the directory
// "libddsc0debian" beside the libddsc this program loaded
// (/usr/lib/<triplet>/libddsc0debian).
std::string DefaultDdsSecurityPluginDir();

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_DDS_SECURITY_H_
