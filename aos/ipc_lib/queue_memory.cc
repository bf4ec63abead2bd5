// QueueLayout and QueueMemory: sizing a channel's queue, and creating,
// validating and mapping its file. Nothing here is on the realtime path.

#include "aos/ipc_lib/queue_memory.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/ipc_lib/process_robust_list.h"
#include "aos/ipc_lib/queue_memory_internal.h"
#include "aos/ipc_lib/shared_memory_layout.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AOS_IPC_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define AOS_IPC_ASAN 1
#endif
#ifdef AOS_IPC_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace aos::ipc_lib {
namespace {

using internal::kInitialisedMarker;
using internal::kQueueMagic;
using internal::MemoryMap;
using internal::QueueHeader;
using internal::QueueView;
using internal::RoundUp;
using internal::StoredLayout;

// How long an opener waits for the creator to size and initialise the file
// (1 s; shorter only in fuzzing, where damaged markers are the common case).
std::atomic<int64_t> initialisation_timeout_ms{1000};

StoredLayout Store(const QueueLayout& layout) {
  StoredLayout stored;
  std::memset(&stored, 0, sizeof(stored));
  stored.message_data_size = layout.message_data_size;
  stored.queue_size = layout.queue_size;
  stored.num_senders = layout.num_senders;
  stored.num_watchers = layout.num_watchers;
  stored.channel_storage_duration_ns = layout.channel_storage_duration_ns;
  return stored;
}

QueueLayout Load(const StoredLayout& stored) {
  QueueLayout layout;
  layout.message_data_size = stored.message_data_size;
  layout.queue_size = stored.queue_size;
  layout.num_senders = stored.num_senders;
  layout.num_watchers = stored.num_watchers;
  layout.channel_storage_duration_ns = stored.channel_storage_duration_ns;
  return layout;
}

// "max_size 64, ..., layout version `version`".
std::string LayoutToString(const QueueLayout& layout, uint32_t version) {
  return aos::StrCat("max_size ", layout.message_data_size, ", queue ",
                     layout.queue_size, ", senders ", layout.num_senders,
                     ", watchers ", layout.num_watchers, ", storage ",
                     layout.channel_storage_duration_ns, " ns, layout version ",
                     version);
}

std::string Hex(uint64_t value) {
  char text[17];
  snprintf(text, sizeof(text), "%016" PRIx64, value);
  return text;
}

std::string ErrnoText(int error) {
  char buffer[256];
  // GNU strerror_r: returns the text, which may or may not be in buffer.
  return strerror_r(error, buffer, sizeof(buffer));
}

std::string Octal(mode_t mode) {
  std::string digits;
  mode &= 07777;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + (mode & 7)));
    mode >>= 3;
  } while (mode != 0);
  return "0" + digits;
}

void SleepBriefly() {
  const struct timespec delay = {0, 1000000};
  nanosleep(&delay, nullptr);
}

// Who is asking about what, at the start of every message.
struct Context {
  std::string_view path;
  std::string_view channel;
  mode_t permissions;

  std::string Prefix() const { return aos::StrCat(channel, ": "); }

  absl::Status Errno(absl::StatusCode code, std::string_view what,
                     int error) const {
    return absl::Status(code,
                        aos::StrCat(Prefix(), what, ": ", ErrnoText(error)));
  }

  // For files that exist but are not usable queues.
  absl::Status NotAQueue(std::string_view why) const {
    return absl::FailedPreconditionError(
        aos::StrCat(Prefix(), "shared memory file ", path, " ", why,
                    ". Stop every process using it, then delete ", path));
  }

  // "cannot <verb> <path><how> (modes, users): <error>".
  absl::Status OpenFailed(int error, std::string_view verb,
                          std::string_view how = "") const {
    std::string text = aos::StrCat(Prefix(), "cannot ", verb, " ", path, how,
                                   " (requested mode ", Octal(permissions));
    struct stat st;
    if (stat(std::string(path).c_str(), &st) == 0) {
      aos::StrAppend(&text, ", file mode ", Octal(st.st_mode), " owned by uid ",
                     st.st_uid, " gid ", st.st_gid);
    }
    aos::StrAppend(&text, "; this process runs as uid ", geteuid(), " gid ",
                   getegid(), "): ", ErrnoText(error));
    return absl::Status(error == EACCES || error == EPERM
                            ? absl::StatusCode::kPermissionDenied
                            : absl::StatusCode::kUnavailable,
                        text);
  }
};

absl::Status ValidateLayout(const QueueLayout& layout, const Context& context) {
  std::string problem;
  if (layout.queue_size == 0) {
    problem = "queue_size must be at least 1";
  } else if (uint64_t{layout.queue_size} + layout.num_senders >
             internal::kMaxMessages) {
    problem = aos::StrCat("queue_size + num_senders must be at most ",
                          internal::kMaxMessages);
  } else if (layout.num_senders > internal::kMaxSenders) {
    problem =
        aos::StrCat("num_senders must be at most ", internal::kMaxSenders);
  } else if (layout.num_watchers > internal::kMaxWatchers) {
    problem =
        aos::StrCat("num_watchers must be at most ", internal::kMaxWatchers);
  } else if (layout.message_data_size > (1u << 30)) {
    problem = "max_size must be at most 1 GiB";
  } else if (layout.channel_storage_duration_ns < 0) {
    problem = "the storage duration must not be negative";
  }
  if (problem.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      aos::StrCat(context.Prefix(), "cannot build a queue (", context.path,
                  ") for ", layout.ToString(), ": ", problem));
}

// mkdir -p of `path`'s directory. Directories get `permissions` plus search
// permission for whoever may read (0600 -> 0700, 0660 -> 0770), under the
// umask.
absl::Status MakeParentDirectories(const Context& context) {
  const std::string path(context.path);
  const mode_t mode = context.permissions | ((context.permissions & 0444) >> 2);
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string directory = path.substr(0, slash);
    if (mkdir(directory.c_str(), mode) == 0 || errno == EEXIST) continue;
    return context.Errno(
        errno == EACCES ? absl::StatusCode::kPermissionDenied
                        : absl::StatusCode::kUnavailable,
        aos::StrCat("cannot create directory ", directory, " for ", path,
                    " (mode ", Octal(mode), ")"),
        errno);
  }
  return absl::OkStatus();
}

// Writes a fresh queue into zeroed memory; the marker goes last.
void Initialise(void* base, const QueueLayout& layout, size_t size) {
  const QueueView view(base, layout);
  QueueHeader& header = view.header();
  header.magic = kQueueMagic;
  header.layout_version = kLayoutVersion;
  header.header_size = sizeof(QueueHeader);
  header.layout = Store(layout);
  header.layout_hash = layout.Hash();
  header.memory_size = size;
  header.next_queue_index.store(0, std::memory_order_relaxed);

  const uint32_t queue_size = layout.queue_size;
  // Ring position p starts out holding message p as "index p - queue_size"
  // (never readable), so publishing index p expects exactly that.
  for (uint32_t position = 0; position < queue_size; ++position) {
    view.entry(position).store(
        internal::Entry::Pack(uint64_t{position} - queue_size, position,
                              internal::kNoSenderSlot),
        std::memory_order_relaxed);
  }
  // Sender slot k's first scratch message is queue_size + k.
  for (uint32_t slot = 0; slot < layout.num_senders; ++slot) {
    internal::SenderSlot& sender = view.sender(slot);
    sender.owner.store(0, std::memory_order_relaxed);
    sender.state.store(internal::SenderState::Idle(queue_size + slot),
                       std::memory_order_relaxed);
    sender.pending_index.store(0, std::memory_order_relaxed);
  }
  for (uint32_t slot = 0; slot < layout.num_watchers; ++slot) {
    view.watcher(slot).owner.store(0, std::memory_order_relaxed);
    view.watcher(slot).priority.store(0, std::memory_order_relaxed);
  }
  for (uint32_t message = 0; message < view.num_messages(); ++message) {
    internal::MessageHeader& m = view.message_header(message);
    m.queue_index.store(~uint64_t{0}, std::memory_order_relaxed);
    m.monotonic_sent_time.store(INT64_MIN, std::memory_order_relaxed);
    m.realtime_sent_time.store(INT64_MIN, std::memory_order_relaxed);
    m.monotonic_remote_time.store(INT64_MIN, std::memory_order_relaxed);
    m.realtime_remote_time.store(INT64_MIN, std::memory_order_relaxed);
    m.remote_queue_index.store(kNoRemoteQueueIndex, std::memory_order_relaxed);
    m.size.store(0, std::memory_order_relaxed);
    for (size_t i = 0; i < internal::kRedzoneSize; ++i) {
      view.redzone_before(message)[i] = internal::RedzoneByte(i);
    }
    for (size_t i = 0; i < view.redzone_after_size(); ++i) {
      view.redzone_after(message)[i] = internal::RedzoneByte(i);
    }
  }
  header.initialised.store(kInitialisedMarker, std::memory_order_release);
}

void* MapShared(int fd, size_t size, int protection) {
  void* base =
      mmap(nullptr, size, protection, MAP_SHARED | MAP_POPULATE, fd, 0);
  return base == MAP_FAILED ? nullptr : base;
}

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// The queue's mapping, between two inaccessible pages.
struct GuardedMapping {
  void* reservation = nullptr;
  size_t reservation_size = 0;
  void* base = nullptr;
};

// The bytes between the end of the queue and the end of its last page.
// They read as zeros, so under AddressSanitizer they are marked unreadable:
// the guard pages catch only reads a page or more out of bounds.
void PoisonTail(void* base, size_t size, bool poison) {
#ifdef AOS_IPC_ASAN
  const size_t tail = RoundUp(size, PageSize()) - size;
  if (poison) {
    ASAN_POISON_MEMORY_REGION(static_cast<char*>(base) + size, tail);
  } else {
    ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(base) + size, tail);
  }
#else
  (void)base, (void)size, (void)poison;
#endif
}

// Reserves the address range with no access, then maps the file read-write
// into its middle.
bool MapGuarded(int fd, size_t size, GuardedMapping* mapping) {
  const size_t page = PageSize();
  const size_t reservation_size = RoundUp(size, page) + 2 * page;
  void* reservation = mmap(nullptr, reservation_size, PROT_NONE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reservation == MAP_FAILED) return false;
  void* const wanted = static_cast<char*>(reservation) + page;
  void* base = mmap(wanted, size, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0);
  if (base != wanted) {
    const int error = errno;
    munmap(reservation, reservation_size);
    errno = error;
    return false;
  }
  PoisonTail(base, size, true);
  *mapping = GuardedMapping{reservation, reservation_size, base};
  return true;
}

// "cannot reserve N bytes for <path>: <error> (M bytes free in <dir>)".
absl::Status NoSpace(const Context& context, size_t size, int error) {
  const std::string path(context.path);
  const std::string directory = path.substr(0, path.rfind('/') + 1);
  std::string free_space;
  struct statvfs fs;
  if (statvfs(directory.empty() ? "." : directory.c_str(), &fs) == 0) {
    free_space =
        aos::StrCat(" (", static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize,
                    " bytes free in ", directory, ")");
  }
  return absl::ResourceExhaustedError(aos::StrCat(
      context.Prefix(), "cannot reserve ", size, " bytes for ", path, ": ",
      ErrnoText(error), free_space,
      error == ENOSPC ? "; free space there, give --shm_base more room, or "
                        "make the channel smaller (max_size, frequency, "
                        "num_senders, num_watchers)"
                      : ""));
}

// The creator: the file is ours alone until the marker is stored.
absl::StatusOr<GuardedMapping> CreateQueue(int fd, const QueueLayout& layout,
                                           const Context& context) {
  const size_t size = layout.MemorySize();
  const std::string path(context.path);
  absl::Status status;
  GuardedMapping mapping;
  // The mode is exactly `permissions`, whatever the umask, so every user the
  // mode admits can open it.
  if (fchmod(fd, context.permissions) != 0) {
    status = context.OpenFailed(errno, "set the mode of");
  } else if (const int error = posix_fallocate(fd, 0, static_cast<off_t>(size));
             error != 0) {
    // Reserved for real, not a sparse file: on a full filesystem a sparse
    // file maps fine and then kills every process that touches a page
    // (SIGBUS) with no word said.
    status = NoSpace(context, size, error);
  } else if (!MapGuarded(fd, size, &mapping)) {
    status = context.Errno(absl::StatusCode::kResourceExhausted,
                           aos::StrCat("cannot map ", size, " bytes of ", path),
                           errno);
  }
  if (!status.ok()) {
    // Nobody can use a file we could not set up; do not leave it for others
    // to wait on.
    unlink(path.c_str());
    return status;
  }
  Initialise(mapping.base, layout, size);
  return mapping;
}

// Removes the context's path if it still names the file `opened` (whose
// creator died before finishing it), so that the next opener makes it again.
void RemoveAbandoned(const struct stat& opened, const Context& context) {
  const std::string path(context.path);
  struct stat named;
  if (stat(path.c_str(), &named) == 0 && named.st_dev == opened.st_dev &&
      named.st_ino == opened.st_ino) {
    unlink(path.c_str());
  }
  LOG(WARNING) << context.Prefix() << "removed " << path << " ("
               << opened.st_size
               << " bytes): a process died while creating it, leaving it "
                  "unfinished; making it again";
}

// Everyone else: wait for the creator, then check the file is what we want.
// Reads only; the file is never written unless it matches. A creator holds
// an exclusive flock on the file until it is finished: a file still
// unfinished whose lock we can take was abandoned (its creator died): it is
// removed and `*abandoned` set, for the caller to start over.
absl::StatusOr<GuardedMapping> OpenExistingQueue(int fd,
                                                 const QueueLayout& layout,
                                                 const Context& context,
                                                 bool* abandoned) {
  const std::string path(context.path);
  const size_t header_size = sizeof(QueueHeader);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(
          initialisation_timeout_ms.load(std::memory_order_relaxed));
  // The header alone, read-only, while we wait and check.
  struct HeaderMapping {
    void* base = nullptr;
    ~HeaderMapping() {
      if (base != nullptr) munmap(base, sizeof(QueueHeader));
    }
  } header_map;
  struct stat st;
  // We hold the creator's lock: nobody is creating the file any more.
  bool locked = false;
  while (true) {
    if (fstat(fd, &st) != 0) {
      return context.Errno(absl::StatusCode::kUnavailable,
                           aos::StrCat("cannot stat ", path), errno);
    }
    if (!S_ISREG(st.st_mode)) {
      return context.NotAQueue("is not a regular file");
    }
    // Empty: the creator has not reserved its space yet.
    bool finished = false;
    if (st.st_size != 0) {
      if (static_cast<size_t>(st.st_size) < header_size) {
        return context.NotAQueue(aos::StrCat(
            "is truncated (", st.st_size, " bytes, smaller than the ",
            header_size, "-byte queue header)"));
      }
      if (header_map.base == nullptr) {
        header_map.base = MapShared(fd, header_size, PROT_READ);
        if (header_map.base == nullptr) {
          return context.Errno(absl::StatusCode::kUnavailable,
                               aos::StrCat("cannot map the header of ", path),
                               errno);
        }
      }
      const QueueHeader& header =
          *static_cast<const QueueHeader*>(header_map.base);
      const uint64_t magic = __atomic_load_n(&header.magic, __ATOMIC_RELAXED);
      const uint32_t marker =
          header.initialised.load(std::memory_order_acquire);
      if ((magic != 0 && magic != kQueueMagic) ||
          (marker != 0 && marker != kInitialisedMarker)) {
        return context.NotAQueue("is not an aos queue (bad magic number)");
      }
      finished = magic == kQueueMagic && marker == kInitialisedMarker;
    }
    if (finished) {
      if (locked) flock(fd, LOCK_UN);
      break;
    }
    if (locked) {
      // Unfinished, and seen so after taking the lock: abandoned.
      RemoveAbandoned(st, context);
      *abandoned = true;
      return absl::AbortedError("abandoned");
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      // Look again, holding it: the creator may have finished just now.
      locked = true;
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return context.NotAQueue(
          aos::StrCat("is still being created by another process after ",
                      initialisation_timeout_ms.load(std::memory_order_relaxed),
                      " ms (it holds the file's lock; is it stopped?)"));
    }
    SleepBriefly();
  }

  const QueueHeader& header = *static_cast<const QueueHeader*>(header_map.base);
  const QueueLayout file_layout = Load(header.layout);
  const uint32_t file_version = header.layout_version;
  const uint64_t file_hash = header.layout_hash;
  const uint64_t file_memory_size = header.memory_size;
  const uint32_t file_header_size = header.header_size;

  const size_t size = layout.MemorySize();
  const bool same_fields =
      file_version == kLayoutVersion && file_layout == layout;
  if (!same_fields || file_hash != layout.Hash()) {
    // The hash covers what the fields cannot show: a file written by a build
    // whose layout had other fields (or whose header is damaged).
    return absl::FailedPreconditionError(aos::StrCat(
        context.Prefix(), "shared memory file ", path,
        " was made for another queue layout.\n  file has:      ",
        LayoutToString(file_layout, file_version), ", hash ", Hex(file_hash),
        "\n  program wants: ", layout.ToString(), ", hash ", Hex(layout.Hash()),
        same_fields ? "\nThe fields agree but the hashes do not: another build "
                      "of aos wrote it, or its header is damaged."
                    : "",
        "\nStop every process using ", context.channel, ", then delete ",
        path));
  }
  if (file_header_size != header_size || file_memory_size != size) {
    return context.NotAQueue(
        "has a corrupt header (its sizes disagree with its layout)");
  }
  if (static_cast<size_t>(st.st_size) < size) {
    return context.NotAQueue(aos::StrCat(
        "is truncated (", st.st_size, " bytes; its layout needs ", size, ")"));
  }
  GuardedMapping mapping;
  if (!MapGuarded(fd, size, &mapping)) {
    return context.Errno(absl::StatusCode::kResourceExhausted,
                         aos::StrCat("cannot map ", size, " bytes of ", path),
                         errno);
  }
  return mapping;
}

}  // namespace

namespace internal {

void SetInitialisationTimeoutForTesting(std::chrono::milliseconds timeout) {
  initialisation_timeout_ms.store(timeout.count(), std::memory_order_relaxed);
}

}  // namespace internal

size_t QueueLayout::MemorySize() const { return MemoryMap::For(*this).total; }

uint64_t QueueLayout::Hash() const {
  // FNV-1a over the stored form (fixed widths, zeroed padding) and the
  // version.
  struct {
    StoredLayout layout;
    uint32_t version;
    uint32_t zero;
  } hashed;
  std::memset(&hashed, 0, sizeof(hashed));
  hashed.layout = Store(*this);
  hashed.version = kLayoutVersion;
  uint64_t hash = 0xcbf29ce484222325ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(&hashed);
  for (size_t i = 0; i < sizeof(hashed); ++i) {
    hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  }
  return hash;
}

std::string QueueLayout::ToString() const {
  return LayoutToString(*this, kLayoutVersion);
}

absl::StatusOr<std::unique_ptr<QueueMemory>> QueueMemory::Open(
    std::string_view path, const QueueLayout& layout, mode_t permissions,
    std::string_view channel_description) {
  const Context context{path, channel_description, permissions};
  if (absl::Status status = ValidateLayout(layout, context); !status.ok()) {
    return status;
  }
  if (absl::Status status = MakeParentDirectories(context); !status.ok()) {
    return status;
  }
  const std::string path_string(path);
  // The file may be deleted between our failed O_EXCL and our open of the
  // existing one; try again a few times.
  // Another process may delete the file between our failed O_EXCL and our
  // open of the existing one, or remove one it found abandoned (or we may);
  // try again a few times.
  constexpr int kAttempts = 100;
  for (int attempt = 0;; ++attempt) {
    ScopedFd fd(open(path_string.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
                     permissions));
    absl::StatusOr<GuardedMapping> mapping;
    if (fd.valid()) {
      // Held until the file is finished (closing it releases the lock), so
      // openers can tell a creator at work from one that died. It blocks
      // only while an opener checks the file.
      flock(fd.get(), LOCK_EX);
      struct stat st;
      if (fstat(fd.get(), &st) == 0 && st.st_nlink == 0 &&
          attempt < kAttempts) {
        // An opener took the lock before we did and removed the empty file
        // as abandoned.
        continue;
      }
      mapping = CreateQueue(fd.get(), layout, context);
    } else if (errno != EEXIST) {
      return context.OpenFailed(errno, "create");
    } else {
      fd.reset(open(path_string.c_str(), O_RDWR | O_CLOEXEC));
      if (!fd.valid()) {
        if (errno == ENOENT && attempt < kAttempts) continue;
        if (errno == EISDIR) return context.NotAQueue("is not a regular file");
        return context.OpenFailed(errno, "open", " for reading and writing");
      }
      bool abandoned = false;
      mapping = OpenExistingQueue(fd.get(), layout, context, &abandoned);
      if (abandoned && attempt < kAttempts) continue;
    }
    struct stat identity = {};
    const bool known = fstat(fd.get(), &identity) == 0;
    // The mapping keeps the file alive.
    fd.reset();
    if (!mapping.ok()) return mapping.status();
    CHECK(known) << "fstat of " << path_string << " failed after mapping it";
    return std::unique_ptr<QueueMemory>(new QueueMemory(
        path_string, std::string(channel_description), layout,
        FileIdentity{identity.st_dev, identity.st_ino}, mapping->reservation,
        mapping->reservation_size, mapping->base));
  }
}

QueueMemory::QueueMemory(std::string path, std::string channel,
                         QueueLayout layout, FileIdentity identity,
                         void* reservation, size_t reservation_size, void* base)
    : path_(std::move(path)),
      channel_(std::move(channel)),
      layout_(layout),
      identity_(identity),
      reservation_(reservation),
      reservation_size_(reservation_size),
      base_(base) {}

QueueMemory::FileState QueueMemory::CheckFile() const {
  struct stat named;
  if (stat(path_.c_str(), &named) != 0) {
    // Anything but "not there" (a directory we may no longer search, say)
    // tells nothing about the file.
    return errno == ENOENT ? FileState::kRemoved : FileState::kInPlace;
  }
  return named.st_dev == identity_.device && named.st_ino == identity_.inode
             ? FileState::kInPlace
             : FileState::kReplaced;
}

QueueMemory::~QueueMemory() {
  const size_t size = layout_.MemorySize();
  // Slots still held here could never be marked once unmapped.
  internal::ReleaseAllListedIn(base_, static_cast<char*>(base_) + size);
  PoisonTail(base_, size, false);
  PCHECK(munmap(reservation_, reservation_size_) == 0);
}

}  // namespace aos::ipc_lib
