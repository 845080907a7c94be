// A key file's text (whatever a user or another process put there): either a
// key or an error, never a crash or a read past the text.
#include "auth/key_file.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  // A copy of exactly Size bytes, so that ASan sees any read beyond them.
  std::vector<char> Text(Data, Data + Size);
  auto K = ompdpu::auth::parseKeyText(Text.data(), Text.size(), "fuzz");
  if (K && (*K)[0] == 0 && Size == 0)
    __builtin_trap(); // an empty text is never a key
  return 0;
}
