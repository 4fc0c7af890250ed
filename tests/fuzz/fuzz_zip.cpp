// libFuzzer target over the checkpoint archive reader (ember/serialize/zip_archive.h; built and
// run by scripts/sanitize.sh under ASan+UBSan). The input is taken as a whole archive: open it,
// then locate and read every record. Malformed input must raise ember::Error (Note [Reading
// untrusted archives]); a crash, a sanitizer report or any other exception is a bug. Seeds in
// tests/fuzz/zip_corpus: archives written by torch.save and ember.save, a ZIP64 one, a deflated one.
#include <cstdint>
#include <vector>

#include "ember/core/error.h"
#include "ember/serialize/zip_archive.h"

using namespace ember::serialize;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ZipReader r(memory_source(data, size));
    for (const ZipEntry& e : r.entries()) {
      try {
        r.data_offset(e);
        // Sizes are bounded by the input (stored) or 1032x it (deflated): never a huge buffer.
        std::vector<uint8_t> buf(e.size);
        r.read(e, buf.data(), e.size);
      } catch (const ember::Error&) {
        // one bad record: the others are still read
      }
    }
  } catch (const ember::Error&) {
  }
  return 0;
}
