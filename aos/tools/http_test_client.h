#ifndef AOS_TOOLS_HTTP_TEST_CLIENT_H_
#define AOS_TOOLS_HTTP_TEST_CLIENT_H_

// Plain TCP connections to a server on 127.0.0.1, for tests of HTTP
// servers: well-behaved requests, and the hostile ones a test needs to hold
// open, trickle, or stream without end.
//
//   absl::StatusOr<HttpResponse> response =
//       HttpGet(port, "/metrics", std::chrono::seconds(30));
//   ASSERT_TRUE(response.ok()) << response.status();
//   EXPECT_EQ(response->status, 200);
//
// Every wait has a deadline, and a failure says what never came.

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "aos/util/scoped_fd.h"

namespace aos {

// One TCP connection to 127.0.0.1:port. Owns its socket; closes it when
// destroyed. Not thread-safe.
class LoopbackConnection {
 public:
  // Connects, waiting at most `timeout` for the handshake. Check ok().
  LoopbackConnection(int port, std::chrono::milliseconds timeout);
  LoopbackConnection(const LoopbackConnection&) = delete;
  LoopbackConnection& operator=(const LoopbackConnection&) = delete;

  // Whether the connection was made; error() says why not.
  bool ok() const { return fd_.valid(); }
  const std::string& error() const { return error_; }

  // Sends as much of `bytes` as the socket takes without blocking; returns
  // how many bytes, or -1 once the peer has closed or reset the connection.
  ssize_t SendSome(std::string_view bytes);

  // Sends all of `bytes`, waiting at most `timeout`. False if the peer
  // closed, or the time ran out.
  bool SendAll(std::string_view bytes, std::chrono::milliseconds timeout);

  // No more bytes from us (shutdown(SHUT_WR)): the peer reads end of file.
  void FinishSending();

  // Whether the peer has closed or reset the connection, without waiting
  // (bytes it sent and we have not read do not count as closed).
  bool ClosedByPeer();

  // poll() for `events` (POLLIN, POLLOUT, ...) at most `timeout`; the
  // revents, 0 when the time ran out.
  short Poll(short events, std::chrono::milliseconds timeout);

  // Everything the peer sends until it closes the connection, waiting at
  // most `timeout` in all. A reset after some bytes returns those bytes.
  absl::StatusOr<std::string> ReadUntilClosed(
      std::chrono::milliseconds timeout);

 private:
  ScopedFd fd_;
  std::string error_;
};

// An HTTP response as read off the wire.
struct HttpResponse {
  int status = 0;    // From the status line.
  std::string head;  // Status line and header lines, CRLFs included.
  std::string body;  // Everything after the blank line.
  // The value of header `name` (case-insensitive), or "" if absent.
  std::string Header(std::string_view name) const;
};

// Splits `raw` (bytes read until the server closed) into a response. An
// error names what is malformed.
absl::StatusOr<HttpResponse> ParseHttpResponse(std::string_view raw);

// GET http://127.0.0.1:port`path` with "Connection: close"; waits at most
// `timeout` in all for the whole response.
absl::StatusOr<HttpResponse> HttpGet(int port, std::string_view path,
                                     std::chrono::milliseconds timeout);

}  // namespace aos

#endif  // AOS_TOOLS_HTTP_TEST_CLIENT_H_
