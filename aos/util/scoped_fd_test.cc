#include "aos/util/scoped_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include "gtest/gtest.h"

namespace aos {
namespace {

// Whether fd names an open descriptor of this process.
bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

// A fresh descriptor on /dev/null.
int OpenNull() {
  const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  return fd;
}

TEST(ScopedFdTest, DefaultOwnsNothing) {
  ScopedFd fd;
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(fd);
  EXPECT_EQ(fd.get(), -1);
}

TEST(ScopedFdTest, NegativeOwnsNothing) {
  ScopedFd fd(-5);
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(fd.get(), -1);
}

TEST(ScopedFdTest, ClosesWhenDestroyed) {
  int raw;
  {
    ScopedFd fd(OpenNull());
    raw = fd.get();
    EXPECT_TRUE(fd.valid());
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(ScopedFdTest, ReleaseGivesUpOwnership) {
  int raw;
  {
    ScopedFd fd(OpenNull());
    raw = fd.release();
    EXPECT_FALSE(fd.valid());
  }
  EXPECT_TRUE(IsOpen(raw));
  close(raw);
}

TEST(ScopedFdTest, ResetClosesTheOldAndTakesTheNew) {
  ScopedFd fd(OpenNull());
  const int first = fd.get();
  const int second = OpenNull();
  fd.reset(second);
  EXPECT_FALSE(IsOpen(first));
  EXPECT_EQ(fd.get(), second);
  EXPECT_TRUE(IsOpen(second));
  fd.reset();
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(IsOpen(second));
}

TEST(ScopedFdTest, MoveTransfersOwnership) {
  ScopedFd a(OpenNull());
  const int raw = a.get();
  ScopedFd b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): specified.
  EXPECT_EQ(b.get(), raw);
  EXPECT_TRUE(IsOpen(raw));
}

TEST(ScopedFdTest, MoveAssignClosesWhatTheTargetHeld) {
  ScopedFd a(OpenNull());
  ScopedFd b(OpenNull());
  const int a_raw = a.get();
  const int b_raw = b.get();
  b = std::move(a);
  EXPECT_FALSE(IsOpen(b_raw));
  EXPECT_EQ(b.get(), a_raw);
  EXPECT_TRUE(IsOpen(a_raw));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): specified.
}

TEST(ScopedFdTest, CloseReportsAndEmpties) {
  ScopedFd fd(OpenNull());
  const int raw = fd.get();
  EXPECT_EQ(fd.Close(), 0);
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(IsOpen(raw));
  EXPECT_EQ(fd.Close(), 0);  // Nothing left to close.
}

TEST(ScopedFdTest, ResetKeepsErrno) {
  ScopedFd fd(OpenNull());
  errno = ENOENT;
  fd.reset();
  EXPECT_EQ(errno, ENOENT);
}

}  // namespace
}  // namespace aos
