#include "aos/network/dds_security.h"

#include <filesystem>
#include <fstream>

#include "aos/network/test_certificates.h"
#include "aos/util/str_cat.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSource = "--dds_security=test";

class DdsSecurityTest : public ::testing::Test {
 protected:
  DdsSecurityTest() : ca_(MakeTestCa({"pi1", "pi2"})) {}

  DdsSecurityFiles Files(std::string_view node = "pi1") const {
    return DdsSecurityFiles::InDirectory(ca_, node, kSource);
  }

  // The one line CheckDdsSecurityFiles says about `files`.
  static std::string Refusal(const DdsSecurityFiles& files) {
    absl::StatusOr<DdsSecurityInfo> info = CheckDdsSecurityFiles(files);
    if (info.ok()) return "accepted";
    return std::string(info.status().message());
  }

  const std::string ca_;
};

TEST_F(DdsSecurityTest, MakeTestCaFilesAreAcceptedAndDescribed) {
  for (const char* node : {"pi1", "pi2"}) {
    absl::StatusOr<DdsSecurityInfo> info = CheckDdsSecurityFiles(Files(node));
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->subject, StrCat("CN=", node, ",O=aos"));
    EXPECT_EQ(info->Describe(),
              StrCat("authenticated, encrypted (identity \"CN=", node,
                     ",O=aos\", governance rtps_protection_kind \"ENCRYPT\", "
                     "allow_unauthenticated_participants \"false\")"));
  }
}

TEST_F(DdsSecurityTest, AMissingDirectoryNamesTheFirstFile) {
  DdsSecurityFiles files =
      DdsSecurityFiles::InDirectory("/nonexistent/dds", "pi1", kSource);
  EXPECT_EQ(Refusal(files),
            "--dds_security=test: identity CA certificate "
            "/nonexistent/dds/identity_ca.pem: no such file");
  files = Files("pi3");
  EXPECT_EQ(Refusal(files), StrCat("--dds_security=test: identity certificate ",
                                   ca_, "/pi3/identity.pem: no such file"));
}

TEST_F(DdsSecurityTest, DamagedOrWrongFilesAreNamed) {
  const DdsSecurityFiles good = Files();
  {
    DdsSecurityFiles files = good;
    files.identity_certificate = ca_ + "/pi1";
    EXPECT_EQ(Refusal(files), StrCat("--dds_security=test: identity "
                                     "certificate ",
                                     ca_, "/pi1: not a regular file"));
  }
  {
    const std::string garbage = ca_ + "/garbage.pem";
    std::ofstream(garbage) << "-----BEGIN CERTIFICATE-----\n\x1b[2J\n";
    DdsSecurityFiles files = good;
    files.permissions_ca = garbage;
    const std::string refusal = Refusal(files);
    EXPECT_TRUE(refusal.starts_with(
        StrCat("--dds_security=test: permissions CA certificate ", garbage,
               ": not a PEM X.509 certificate (")))
        << refusal;
    EXPECT_EQ(refusal.find('\x1b'), std::string::npos) << refusal;
  }
  {
    DdsSecurityFiles files = good;
    files.private_key = ca_ + "/pi2/identity_key.pem";
    EXPECT_EQ(Refusal(files),
              StrCat("--dds_security=test: private key ", ca_,
                     "/pi2/identity_key.pem: is not the key of the identity "
                     "certificate ",
                     ca_, "/pi1/identity.pem"));
  }
  {
    // pi1's permissions, pi2's certificate.
    DdsSecurityFiles files = Files("pi2");
    files.permissions = good.permissions;
    EXPECT_EQ(Refusal(files),
              StrCat("--dds_security=test: permissions document ", ca_,
                     "/pi1/permissions.p7s: grants nothing to the identity "
                     "certificate's subject \"CN=pi2,O=aos\" (its "
                     "subject_name: \"CN=pi1,O=aos\")"));
  }
  {
    // An unsigned document where a signed one belongs.
    DdsSecurityFiles files = good;
    files.governance = ca_ + "/private/governance.xml";
    const std::string refusal = Refusal(files);
    EXPECT_TRUE(refusal.starts_with(
        StrCat("--dds_security=test: governance document ", ca_,
               "/private/governance.xml: not an S/MIME signed document (")))
        << refusal;
  }
}

// Files of another CA: a certificate the identity CA did not sign, and a
// document the permissions CA did not sign.
TEST_F(DdsSecurityTest, FilesOfAnotherCaAreRefused) {
  const std::string other = MakeTestCa({"pi1"});
  DdsSecurityFiles files = Files();
  files.identity_certificate = other + "/pi1/identity.pem";
  files.private_key = other + "/pi1/identity_key.pem";
  EXPECT_EQ(Refusal(files),
            StrCat("--dds_security=test: identity certificate ", other,
                   "/pi1/identity.pem: not accepted by the identity CA ", ca_,
                   "/identity_ca.pem: unable to get local issuer certificate"));
  files = Files();
  files.governance = other + "/governance.p7s";
  const std::string refusal = Refusal(files);
  EXPECT_TRUE(refusal.starts_with(
      StrCat("--dds_security=test: governance document ", other,
             "/governance.p7s: not signed by the permissions CA (")))
      << refusal;
}

TEST_F(DdsSecurityTest, APluginThatDoesNotLoadIsNamed) {
  DdsSecurityFiles files = Files();
  files.plugin_dir = "/nonexistent/plugins";
  files.plugin_source = "--dds_security_plugins=/nonexistent/plugins";
  EXPECT_EQ(Refusal(files),
            "--dds_security_plugins=/nonexistent/plugins: Cyclone DDS's "
            "security plugin /nonexistent/plugins/libdds_security_auth.so: no "
            "such file (Debian's libddsc0debian has the plugins; "
            "--dds_security_plugins names another directory)");
  // A file that is not a library.
  const std::string dir = ca_ + "/plugins";
  fs::create_directories(dir);
  std::ofstream(dir + "/libdds_security_auth.so") << "not a library";
  files.plugin_dir = dir;
  const std::string refusal = Refusal(files);
  EXPECT_TRUE(refusal.starts_with(
      StrCat("--dds_security_plugins=/nonexistent/plugins: Cyclone DDS's "
             "security plugin ",
             dir, "/libdds_security_auth.so: cannot be loaded: \"")))
      << refusal;
}

TEST_F(DdsSecurityTest, DebiansPluginsAreTheDefault) {
  const std::string dir = DefaultDdsSecurityPluginDir();
  EXPECT_TRUE(dir.ends_with("/libddsc0debian")) << dir;
  EXPECT_TRUE(fs::exists(dir + "/libdds_security_auth.so")) << dir;
}

TEST_F(DdsSecurityTest, PropertiesNameEveryFileAsAnAbsoluteUri) {
  DdsSecurityFiles files = Files();
  dds_qos_t* qos = dds_create_qos();
  SetDdsSecurityProperties(files, qos);
  auto property = [&](const char* name) {
    char* value = nullptr;
    if (!dds_qget_prop(qos, name, &value)) return std::string("(none)");
    std::string result(value);
    dds_free(value);
    return result;
  };
  const std::string absolute = fs::absolute(ca_).string();
  EXPECT_EQ(property("dds.sec.auth.identity_ca"),
            "file:" + absolute + "/identity_ca.pem");
  EXPECT_EQ(property("dds.sec.auth.identity_certificate"),
            "file:" + absolute + "/pi1/identity.pem");
  EXPECT_EQ(property("dds.sec.auth.private_key"),
            "file:" + absolute + "/pi1/identity_key.pem");
  EXPECT_EQ(property("dds.sec.access.permissions_ca"),
            "file:" + absolute + "/permissions_ca.pem");
  EXPECT_EQ(property("dds.sec.access.governance"),
            "file:" + absolute + "/governance.p7s");
  EXPECT_EQ(property("dds.sec.access.permissions"),
            "file:" + absolute + "/pi1/permissions.p7s");
  EXPECT_EQ(property("dds.sec.crypto.library.path"),
            files.plugin_dir + "/libdds_security_crypto.so");
  EXPECT_EQ(property("dds.sec.access.library.init"), "init_access_control");
  EXPECT_EQ(property("dds.sec.auth.library.finalize"),
            "finalize_authentication");
  dds_delete_qos(qos);
}

}  // namespace
}  // namespace aos::message_bridge
