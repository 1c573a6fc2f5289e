#pragma once
// The merge step of byte-pair encoding, on token ids, as Hugging Face `tokenizers` runs it
// (`Word::merge_all`): the lowest-ranked adjacent pair first, the leftmost of equal ranks, until no
// adjacent pair has a merge. A heap of candidate pairs over a linked list of symbols makes one word
// O(n log n) in its length (merging the best pair and rescanning is O(n²): minutes on an 8 MB word).
//
// Shared by every BPE tokenizer (byte-level Qwen2, CLIP's "</w>" words): each builds the symbol ids
// of a word its own way and calls merge().

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace svqa {

class BpeMerges {
 public:
  // The next rank: `left` followed by `right` becomes `merged`. A pair added twice keeps its first rank.
  void add(int64_t left, int64_t right, int64_t merged);
  size_t size() const { return table_.size(); }

  // Applies the merges to one word's symbol ids.
  std::vector<int64_t> merge(std::vector<int64_t> symbols) const;

 private:
  struct Merge {
    int64_t rank;
    int64_t merged;
  };
  std::optional<Merge> find(int64_t left, int64_t right) const;
  static uint64_t key(int64_t left, int64_t right) {
    return static_cast<uint64_t>(left) << 32 | static_cast<uint64_t>(right & 0xFFFFFFFF);
  }
  std::unordered_map<uint64_t, Merge> table_;
};

}  // namespace svqa
