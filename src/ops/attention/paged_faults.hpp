#pragma once
// The page-table faults of the paged attention operators (MHCA's pages, FIA's blocks;
// specs/coverage.md "Bug classes reported in the field"): where a faulty kernel reads key t,
// and how many keys it leaves a sequence. The references plant them (`kvbench coverage
// --faults`); the golden reads PagedRead::right.
#include <cstdint>

namespace kvbench {

// How a faulty paged kernel turns a key's position into its page and row.
enum class PagedRead {
  right,              // page t / page_size, row t % page_size
  index_stuck,        // the sequence's first page, row t % page_size (the page index never advanced)
  offset_capped_128,  // row (t % page_size) % 128 (flashinfer#4347)
  size_doubled,       // page t / (2 page_size), row t % (2 page_size), past the page's end (vllm#27547)
};

// Key t's page, as an index into the sequence's row of the page table, and its row in that page
// (which size_doubled may take past the page's end).
struct PageSlot {
  int64_t entry = 0, row = 0;
};
inline PageSlot paged_slot(int64_t t, int64_t page_size, PagedRead read) {
  switch (read) {
    case PagedRead::index_stuck: return {0, t % page_size};
    case PagedRead::offset_capped_128: return {t / page_size, t % page_size % 128};
    case PagedRead::size_doubled: return {t / (2 * page_size), t % (2 * page_size)};
    default: return {t / page_size, t % page_size};
  }
}

// The keys a kernel attends over when it takes the last page's length as keys % page_size
// (vllm#31282): a sequence that fills its last page loses that page.
inline int64_t keys_last_page_mod(int64_t keys, int64_t page_size) {
  return keys > 0 && keys % page_size == 0 ? keys - page_size : keys;
}

}  // namespace kvbench
