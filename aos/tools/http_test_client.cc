#include "aos/tools/http_test_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left until `deadline`, for poll(): 0 once it has passed.
int MillisecondsUntil(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

// Waits for `events` on `fd` until `deadline`; the revents, 0 on timeout.
short PollUntil(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p = {fd, events, 0};
    const int result = poll(&p, 1, MillisecondsUntil(deadline));
    if (result < 0 && errno == EINTR) continue;
    return result > 0 ? p.revents : 0;
  }
}

}  // namespace

LoopbackConnection::LoopbackConnection(int port,
                                       std::chrono::milliseconds timeout) {
  ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) {
    error_ = StrCat("socket: ", strerror(errno));
    return;
  }
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&address),
              sizeof(address)) != 0 &&
      errno != EINPROGRESS) {
    error_ = StrCat("connect to 127.0.0.1:", port, ": ", strerror(errno));
    return;
  }
  if ((PollUntil(fd.get(), POLLOUT, Clock::now() + timeout) & POLLOUT) == 0) {
    error_ = StrCat("connect to 127.0.0.1:", port, ": no handshake in ",
                    timeout.count(), " ms");
    return;
  }
  int socket_error = 0;
  socklen_t length = sizeof(socket_error);
  getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &socket_error, &length);
  if (socket_error != 0) {
    error_ =
        StrCat("connect to 127.0.0.1:", port, ": ", strerror(socket_error));
    return;
  }
  fd_ = std::move(fd);
}

ssize_t LoopbackConnection::SendSome(std::string_view bytes) {
  const ssize_t sent =
      send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent >= 0) return sent;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
}

bool LoopbackConnection::SendAll(std::string_view bytes,
                                 std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (!bytes.empty()) {
    const ssize_t sent = SendSome(bytes);
    if (sent < 0) return false;
    bytes.remove_prefix(static_cast<size_t>(sent));
    if (!bytes.empty() && (PollUntil(fd_.get(), POLLOUT, deadline) &
                           (POLLOUT | POLLERR | POLLHUP)) == 0) {
      return false;
    }
  }
  return true;
}

void LoopbackConnection::FinishSending() { shutdown(fd_.get(), SHUT_WR); }

bool LoopbackConnection::ClosedByPeer() {
  const short revents = PollUntil(fd_.get(), POLLIN | POLLRDHUP, Clock::now());
  if (revents & (POLLERR | POLLHUP | POLLRDHUP)) return true;
  if ((revents & POLLIN) == 0) return false;
  char byte;
  const ssize_t peeked = recv(fd_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EINTR);
}

short LoopbackConnection::Poll(short events,
                               std::chrono::milliseconds timeout) {
  return PollUntil(fd_.get(), events, Clock::now() + timeout);
}

absl::StatusOr<std::string> LoopbackConnection::ReadUntilClosed(
    std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  std::string received;
  char buffer[65536];
  for (;;) {
    const ssize_t read = recv(fd_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
    if (read > 0) {
      received.append(buffer, static_cast<size_t>(read));
      continue;
    }
    if (read == 0) return received;
    if (errno == ECONNRESET && !received.empty()) return received;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return absl::UnavailableError(StrCat("reading after ", received.size(),
                                           " bytes: ", strerror(errno)));
    }
    if (PollUntil(fd_.get(), POLLIN | POLLRDHUP, deadline) == 0) {
      return absl::DeadlineExceededError(
          StrCat("the server did not finish its answer (and close) in ",
                 timeout.count(), " ms; ", received.size(),
                 " bytes came: ", Printable(received)));
    }
  }
}

std::string HttpResponse::Header(std::string_view name) const {
  size_t line = head.find("\r\n");
  while (line != std::string::npos && line + 2 < head.size()) {
    const size_t start = line + 2;
    const size_t end = head.find("\r\n", start);
    const std::string_view header(
        head.data() + start,
        (end == std::string::npos ? head.size() : end) - start);
    const size_t colon = header.find(':');
    if (colon == name.size() &&
        strncasecmp(header.data(), name.data(), name.size()) == 0) {
      std::string_view value = header.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      return std::string(value);
    }
    line = end;
  }
  return "";
}

absl::StatusOr<HttpResponse> ParseHttpResponse(std::string_view raw) {
  const size_t head_end = raw.find("\r\n\r\n");
  if (raw.size() < 12 || raw.substr(0, 7) != "HTTP/1." || raw[8] != ' ' ||
      head_end == std::string_view::npos) {
    return absl::DataLossError(
        StrCat("not an HTTP/1 response: ", Printable(raw)));
  }
  HttpResponse response;
  response.head = std::string(raw.substr(0, head_end + 2));
  response.body = std::string(raw.substr(head_end + 4));
  response.status = atoi(response.head.c_str() + 9);
  return response;
}

absl::StatusOr<HttpResponse> HttpGet(int port, std::string_view path,
                                     std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  const auto left = [&]() {
    return std::chrono::milliseconds(MillisecondsUntil(deadline));
  };
  LoopbackConnection connection(port, timeout);
  if (!connection.ok()) return absl::UnavailableError(connection.error());
  if (!connection.SendAll(StrCat("GET ", path,
                                 " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                 "Connection: close\r\n\r\n"),
                          left())) {
    return absl::UnavailableError(
        StrCat("could not send the request to 127.0.0.1:", port, " in ",
               timeout.count(), " ms"));
  }
  absl::StatusOr<std::string> raw = connection.ReadUntilClosed(left());
  if (!raw.ok()) return raw.status();
  return ParseHttpResponse(*raw);
}

}  // namespace aos
