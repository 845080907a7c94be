//===- key_file.cpp - The shared key a client and a server prove ----------===//
#include "auth/key_file.h"

#include "common/log.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ompdpu::auth {
namespace {

constexpr const char *kPrefix = "ompdpu-key-v1 ";
// Prefix, 64 hex digits and a newline; anything longer is not a key file.
constexpr size_t kMaxFileBytes = 128;

Status sodiumReady() {
  if (sodium_init() < 0)
    return Status::error("libsodium cannot initialise");
  return Status();
}

std::string errnoText(const std::string &What, const std::string &Path) {
  return format("%s %s: %s", What.c_str(), Path.c_str(), std::strerror(errno));
}

} // namespace

Status createKeyFile(const std::string &Path, bool Replace) {
  if (Status S = sodiumReady(); !S.ok())
    return S;
  std::array<uint8_t, kKeyBytes> Bytes;
  randombytes_buf(Bytes.data(), Bytes.size());
  char Hex[2 * kKeyBytes + 1];
  sodium_bin2hex(Hex, sizeof(Hex), Bytes.data(), Bytes.size());
  sodium_memzero(Bytes.data(), Bytes.size());
  std::string Text = std::string(kPrefix) + Hex + "\n";
  sodium_memzero(Hex, sizeof(Hex));
  // Replacing: a new file beside it, renamed over it once complete.
  std::string To = Replace ? Path + ".XXXXXX" : Path;
  int Fd = Replace ? ::mkostemp(To.data(), O_CLOEXEC)
                   : ::open(To.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                            0600);
  if (Fd < 0 && errno == EEXIST && !Replace)
    return Status::error(
        ErrorCode::Auth,
        format("cannot create key file %s: it exists (replace it with `ompdpu "
               "key create --force %s`; servers holding the old key need the "
               "new one)",
               Path.c_str(), Path.c_str()));
  if (Fd < 0)
    return Status::error(errnoText("cannot create key file", To));
  bool Written =
      ::write(Fd, Text.data(), Text.size()) == ssize_t(Text.size()) &&
      ::fsync(Fd) == 0;
  int Saved = errno;
  ::close(Fd);
  sodium_memzero(Text.data(), Text.size());
  if (!Written) {
    ::unlink(To.c_str());
    errno = Saved;
    return Status::error(errnoText("cannot write key file", To));
  }
  if (Replace && ::rename(To.c_str(), Path.c_str()) != 0) {
    Saved = errno;
    ::unlink(To.c_str());
    errno = Saved;
    return Status::error(errnoText("cannot replace key file", Path));
  }
  return Status();
}

Expected<std::array<uint8_t, kKeyBytes>>
parseKeyText(const char *Text, size_t Len, const std::string &Path) {
  std::array<uint8_t, kKeyBytes> Bytes{};
  size_t PrefixLen = std::strlen(kPrefix);
  size_t BinLen = 0;
  const char *End = nullptr;
  bool Good = Len > PrefixLen && Len <= kMaxFileBytes &&
              std::memcmp(Text, kPrefix, PrefixLen) == 0 &&
              sodium_hex2bin(Bytes.data(), Bytes.size(), Text + PrefixLen,
                             Len - PrefixLen, nullptr, &BinLen, &End) == 0 &&
              BinLen == kKeyBytes &&
              (End == Text + Len || (*End == '\n' && End + 1 == Text + Len));
  if (!Good) {
    sodium_memzero(Bytes.data(), Bytes.size());
    return Status::error(
        ErrorCode::Auth,
        format("%s is not an ompdpu key file (replace it with a new key: "
               "`ompdpu key create --force %s`)",
               Path.c_str(), Path.c_str()));
  }
  return Bytes;
}

Expected<Key> loadKeyFile(const std::string &Path) {
  if (Status S = sodiumReady(); !S.ok())
    return S;
  int Fd = ::open(Path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (Fd < 0 && errno == ELOOP)
    return Status::error(
        ErrorCode::Auth,
        format("key file %s is a symbolic link: give the file itself (a link "
               "could point anyone's key file here)",
               Path.c_str()));
  if (Fd < 0)
    return Status::error(ErrorCode::Auth,
                         errnoText("cannot open key file", Path));
  struct stat St;
  if (::fstat(Fd, &St) != 0) {
    ::close(Fd);
    return Status::error(ErrorCode::Auth, errnoText("cannot stat", Path));
  }
  if (!S_ISREG(St.st_mode) || (St.st_mode & 077) != 0) {
    ::close(Fd);
    return Status::error(
        ErrorCode::Auth,
        format("key file %s is %s: it must be a regular file only its owner "
               "can read (chmod 600 %s)",
               Path.c_str(),
               S_ISREG(St.st_mode)
                   ? format("mode %04o", St.st_mode & 07777).c_str()
                   : "not a regular file",
               Path.c_str()));
  }
  char Buf[kMaxFileBytes + 1];
  ssize_t N = ::read(Fd, Buf, sizeof(Buf));
  ::close(Fd);
  auto Bytes = parseKeyText(Buf, N > 0 ? size_t(N) : 0, Path);
  sodium_memzero(Buf, sizeof(Buf));
  if (!Bytes)
    return Bytes.status();
  Key K;
  K.Bytes = *Bytes;
  K.Owner = St.st_uid;
  K.Path = Path;
  return K;
}

} // namespace ompdpu::auth
