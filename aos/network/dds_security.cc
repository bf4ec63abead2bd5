#include "aos/network/dds_security.h"

#include <dlfcn.h>
#include <link.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos::message_bridge {
namespace {

// Certificates, keys and signed documents are a few KiB; a larger file is
// not one of them.
constexpr std::uintmax_t kMaxFileBytes = 1 << 20;

struct Plugin {
  std::string_view file;
  std::string_view init;
  std::string_view finalize;
  // The dds.sec.<prefix>.library.* properties.
  std::string_view prefix;
};
constexpr Plugin kPlugins[] = {
    {"libdds_security_auth.so", "init_authentication",
     "finalize_authentication", "auth"},
    {"libdds_security_ac.so", "init_access_control", "finalize_access_control",
     "access"},
    {"libdds_security_crypto.so", "init_crypto", "finalize_crypto", "crypto"},
};

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* x509) const { X509_free(x509); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct StoreFree {
  void operator()(X509_STORE* store) const { X509_STORE_free(store); }
};
struct StoreContextFree {
  void operator()(X509_STORE_CTX* context) const {
    X509_STORE_CTX_free(context);
  }
};
struct Pkcs7Free {
  void operator()(PKCS7* p7) const { PKCS7_free(p7); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Certificate = std::unique_ptr<X509, X509Free>;

// OpenSSL's queued errors, the last one kept ("" if none), the queue
// emptied.
std::string OpenSslError() {
  std::string last;
  while (const unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof(text));
    last = text;
  }
  return last;
}

// One file of the set, with its role, for error lines.
class File {
 public:
  File(const DdsSecurityFiles& files, std::string_view role,
       const std::string& path)
      : source_(files.source), role_(role), path_(path) {}

  // "<source>: <role> <path>: <what>".
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(
        StrCat(source_, ": ", role_, " ", path_, ": ", what));
  }

  // Its bytes, or why not.
  absl::StatusOr<std::string> Read() const {
    std::error_code error;
    const std::filesystem::file_status status =
        std::filesystem::status(path_, error);
    if (error || !std::filesystem::exists(status)) {
      return Error("no such file");
    }
    if (!std::filesystem::is_regular_file(status)) {
      return Error("not a regular file");
    }
    const std::uintmax_t size = std::filesystem::file_size(path_, error);
    if (error) return Error(error.message());
    if (size == 0) return Error("empty");
    if (size > kMaxFileBytes) {
      return Error(StrCat(size,
                          " bytes, more than any certificate, key or "
                          "signed document (at most ",
                          kMaxFileBytes, ")"));
    }
    std::ifstream in(path_, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return Error("cannot read it (permissions?)");
    return text.str();
  }

  absl::StatusOr<Certificate> ReadCertificate() const {
    absl::StatusOr<std::string> text = Read();
    if (!text.ok()) return text.status();
    Bio bio(BIO_new_mem_buf(text->data(), static_cast<int>(text->size())));
    Certificate certificate(
        PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (certificate == nullptr) {
      return Error(
          StrCat("not a PEM X.509 certificate (", OpenSslError(), ")"));
    }
    return certificate;
  }

 private:
  const std::string& source_;
  const std::string_view role_;
  const std::string& path_;
};

// Refuses to ask for a password on the terminal: an encrypted key fails.
int NoPassword(char*, int, int, void*) { return -1; }

std::string SubjectOf(X509* certificate) {
  Bio bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), X509_get_subject_name(certificate), 0,
                     XN_FLAG_RFC2253);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// The document `file` holds, verified as S/MIME signed by `ca`.
absl::StatusOr<std::string> VerifiedDocument(const File& file, X509* ca) {
  absl::StatusOr<std::string> text = file.Read();
  if (!text.ok()) return text.status();
  Bio in(BIO_new_mem_buf(text->data(), static_cast<int>(text->size())));
  BIO* content_raw = nullptr;
  std::unique_ptr<PKCS7, Pkcs7Free> p7(
      SMIME_read_PKCS7(in.get(), &content_raw));
  Bio content(content_raw);
  if (p7 == nullptr) {
    return file.Error(
        StrCat("not an S/MIME signed document (", OpenSslError(), ")"));
  }
  std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
  X509_STORE_add_cert(store.get(), ca);
  Bio out(BIO_new(BIO_s_mem()));
  // As Cyclone's access control plugin verifies it.
  if (PKCS7_verify(p7.get(), nullptr, store.get(), content.get(), out.get(),
                   PKCS7_TEXT) != 1) {
    return file.Error(
        StrCat("not signed by the permissions CA (", OpenSslError(), ")"));
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// The text of every <tag>...</tag> in `document`, in order.
std::vector<std::string> Elements(std::string_view document,
                                  std::string_view tag) {
  std::vector<std::string> values;
  const std::string open = StrCat("<", tag, ">");
  const std::string close = StrCat("</", tag, ">");
  for (size_t at = document.find(open); at != std::string_view::npos;
       at = document.find(open, at)) {
    at += open.size();
    const size_t end = document.find(close, at);
    if (end == std::string_view::npos) break;
    std::string_view value = document.substr(at, end - at);
    while (!value.empty() &&
           std::isspace(static_cast<unsigned char>(value.front()))) {
      value.remove_prefix(1);
    }
    while (!value.empty() &&
           std::isspace(static_cast<unsigned char>(value.back()))) {
      value.remove_suffix(1);
    }
    values.emplace_back(value);
    at = end + close.size();
  }
  return values;
}

std::string JoinDistinct(const std::vector<std::string>& values) {
  std::vector<std::string> seen;
  std::string joined;
  for (const std::string& value : values) {
    if (std::find(seen.begin(), seen.end(), value) != seen.end()) continue;
    seen.push_back(value);
    if (!joined.empty()) joined += "/";
    joined += value;
  }
  return joined;
}

// The "name=value" parts of a subject, sorted: two subjects are the same
// name when these are equal (Cyclone compares them so, in any order).
std::vector<std::string> SubjectParts(std::string_view subject) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= subject.size()) {
    size_t end = subject.find_first_of(",/", start);
    if (end == std::string_view::npos) end = subject.size();
    std::string_view part = subject.substr(start, end - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) parts.emplace_back(part);
    start = end + 1;
  }
  std::sort(parts.begin(), parts.end());
  return parts;
}

absl::Status CheckPlugin(const DdsSecurityFiles& files, const Plugin& plugin) {
  const std::string path = StrCat(files.plugin_dir, "/", plugin.file);
  auto error = [&](std::string_view what) {
    return absl::InvalidArgumentError(StrCat(files.plugin_source,
                                             ": Cyclone DDS's security plugin ",
                                             path, ": ", what));
  };
  if (!std::filesystem::exists(path)) {
    return error(
        "no such file (Debian's libddsc0debian has the plugins; "
        "--dds_security_plugins names another directory)");
  }
  dlerror();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return error(StrCat("cannot be loaded: ",
                        Printable(why == nullptr ? "" : why, 400)));
  }
  const bool has_init =
      dlsym(library, std::string(plugin.init).c_str()) != nullptr;
  dlclose(library);
  if (!has_init) {
    return error(
        StrCat("has no function ", plugin.init, ": not a DDS Security plugin"));
  }
  return absl::OkStatus();
}

}  // namespace

DdsSecurityFiles DdsSecurityFiles::InDirectory(std::string_view dir,
                                               std::string_view node,
                                               std::string_view source) {
  DdsSecurityFiles files;
  files.source = std::string(source);
  files.identity_ca = StrCat(dir, "/identity_ca.pem");
  files.permissions_ca = StrCat(dir, "/permissions_ca.pem");
  files.governance = StrCat(dir, "/governance.p7s");
  files.identity_certificate = StrCat(dir, "/", node, "/identity.pem");
  files.private_key = StrCat(dir, "/", node, "/identity_key.pem");
  files.permissions = StrCat(dir, "/", node, "/permissions.p7s");
  files.plugin_dir = DefaultDdsSecurityPluginDir();
  files.plugin_source = "the default plugin directory";
  return files;
}

std::string DdsSecurityInfo::Describe() const {
  const bool authenticated = unauthenticated == "false";
  const bool encrypted =
      rtps_protection == "ENCRYPT" ||
      rtps_protection == "ENCRYPT_WITH_ORIGIN_AUTHENTICATION";
  const bool signed_only = rtps_protection == "SIGN" ||
                           rtps_protection == "SIGN_WITH_ORIGIN_AUTHENTICATION";
  return StrCat(
      authenticated ? "authenticated" : "unauthenticated participants allowed",
      ", ",
      encrypted     ? "encrypted"
      : signed_only ? "signed, not encrypted"
                    : "RTPS messages not protected",
      " (identity ", Printable(subject), ", governance rtps_protection_kind ",
      Printable(rtps_protection), ", allow_unauthenticated_participants ",
      Printable(unauthenticated), ")");
}

absl::StatusOr<DdsSecurityInfo> CheckDdsSecurityFiles(
    const DdsSecurityFiles& files) {
  ERR_clear_error();
  const File identity_ca_file(files, "identity CA certificate",
                              files.identity_ca);
  const File certificate_file(files, "identity certificate",
                              files.identity_certificate);
  const File key_file(files, "private key", files.private_key);
  const File permissions_ca_file(files, "permissions CA certificate",
                                 files.permissions_ca);
  const File governance_file(files, "governance document", files.governance);
  const File permissions_file(files, "permissions document", files.permissions);

  absl::StatusOr<Certificate> identity_ca = identity_ca_file.ReadCertificate();
  if (!identity_ca.ok()) return identity_ca.status();
  absl::StatusOr<Certificate> certificate = certificate_file.ReadCertificate();
  if (!certificate.ok()) return certificate.status();
  absl::StatusOr<Certificate> permissions_ca =
      permissions_ca_file.ReadCertificate();
  if (!permissions_ca.ok()) return permissions_ca.status();

  {
    absl::StatusOr<std::string> text = key_file.Read();
    if (!text.ok()) return text.status();
    Bio bio(BIO_new_mem_buf(text->data(), static_cast<int>(text->size())));
    std::unique_ptr<EVP_PKEY, KeyFree> key(
        PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassword, nullptr));
    if (key == nullptr) {
      return key_file.Error(StrCat(
          "not a PEM private key, or an encrypted one (", OpenSslError(), ")"));
    }
    if (X509_check_private_key(certificate->get(), key.get()) != 1) {
      OpenSslError();
      return key_file.Error(
          StrCat("is not the key of the identity certificate ",
                 files.identity_certificate));
    }
  }

  {
    std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
    X509_STORE_add_cert(store.get(), identity_ca->get());
    std::unique_ptr<X509_STORE_CTX, StoreContextFree> context(
        X509_STORE_CTX_new());
    X509_STORE_CTX_init(context.get(), store.get(), certificate->get(),
                        nullptr);
    if (X509_verify_cert(context.get()) != 1) {
      const int error = X509_STORE_CTX_get_error(context.get());
      OpenSslError();
      return certificate_file.Error(
          StrCat("not accepted by the identity CA ", files.identity_ca, ": ",
                 X509_verify_cert_error_string(error)));
    }
  }

  DdsSecurityInfo info;
  info.subject = SubjectOf(certificate->get());
  absl::StatusOr<std::string> governance =
      VerifiedDocument(governance_file, permissions_ca->get());
  if (!governance.ok()) return governance.status();
  info.rtps_protection =
      JoinDistinct(Elements(*governance, "rtps_protection_kind"));
  info.unauthenticated =
      JoinDistinct(Elements(*governance, "allow_unauthenticated_participants"));
  if (info.rtps_protection.empty() || info.unauthenticated.empty()) {
    return governance_file.Error(
        "has no rtps_protection_kind or allow_unauthenticated_participants: "
        "not a DDS Security governance document");
  }

  absl::StatusOr<std::string> permissions =
      VerifiedDocument(permissions_file, permissions_ca->get());
  if (!permissions.ok()) return permissions.status();
  const std::vector<std::string> subjects =
      Elements(*permissions, "subject_name");
  const std::vector<std::string> ours = SubjectParts(info.subject);
  if (std::none_of(subjects.begin(), subjects.end(),
                   [&](const std::string& subject) {
                     return SubjectParts(subject) == ours;
                   })) {
    return permissions_file.Error(
        StrCat("grants nothing to the identity certificate's subject ",
               Printable(info.subject), " (its subject_name: ",
               subjects.empty() ? std::string("none")
                                : Printable(JoinDistinct(subjects)),
               ")"));
  }

  for (const Plugin& plugin : kPlugins) {
    if (absl::Status status = CheckPlugin(files, plugin); !status.ok()) {
      return status;
    }
  }
  return info;
}

void SetDdsSecurityProperties(const DdsSecurityFiles& files, dds_qos_t* qos) {
  auto uri = [](const std::string& path) {
    return StrCat("file:", std::filesystem::absolute(path).string());
  };
  for (const Plugin& plugin : kPlugins) {
    const std::string prefix = StrCat("dds.sec.", plugin.prefix, ".library.");
    dds_qset_prop(qos, StrCat(prefix, "path").c_str(),
                  StrCat(files.plugin_dir, "/", plugin.file).c_str());
    dds_qset_prop(qos, StrCat(prefix, "init").c_str(),
                  std::string(plugin.init).c_str());
    dds_qset_prop(qos, StrCat(prefix, "finalize").c_str(),
                  std::string(plugin.finalize).c_str());
  }
  dds_qset_prop(qos, "dds.sec.auth.identity_ca",
                uri(files.identity_ca).c_str());
  dds_qset_prop(qos, "dds.sec.auth.identity_certificate",
                uri(files.identity_certificate).c_str());
  dds_qset_prop(qos, "dds.sec.auth.private_key",
                uri(files.private_key).c_str());
  dds_qset_prop(qos, "dds.sec.access.permissions_ca",
                uri(files.permissions_ca).c_str());
  dds_qset_prop(qos, "dds.sec.access.governance",
                uri(files.governance).c_str());
  dds_qset_prop(qos, "dds.sec.access.permissions",
                uri(files.permissions).c_str());
}

std::string DefaultDdsSecurityPluginDir() {
  // The libddsc this process loaded, found among its loaded objects (the
  // address of one of its functions may be this program's own stub).
  std::string libddsc;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string_view path =
            info->dlpi_name == nullptr ? "" : info->dlpi_name;
        const size_t slash = path.rfind('/');
        if (slash == std::string_view::npos ||
            !path.substr(slash + 1).starts_with("libddsc.so")) {
          return 0;
        }
        *static_cast<std::string*>(data) = std::string(path.substr(0, slash));
        return 1;
      },
      &libddsc);
  if (libddsc.empty()) libddsc = "/usr/lib/x86_64-linux-gnu";
  return StrCat(libddsc, "/libddsc0debian");
}

}  // namespace aos::message_bridge
