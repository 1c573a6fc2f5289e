#include "models/tokenizers/bpe_merges.h"

#include <queue>
#include <stdexcept>
#include <string>

namespace svqa {

void BpeMerges::add(int64_t left, int64_t right, int64_t merged) {
  if (left < 0 || right < 0 || left > UINT32_MAX || right > UINT32_MAX)
    throw std::out_of_range("BPE merge of token ids " + std::to_string(left) + " and " + std::to_string(right) +
                            ": ids must be in [0, 2^32)");
  table_.emplace(key(left, right), Merge{static_cast<int64_t>(table_.size()), merged});
}

std::optional<BpeMerges::Merge> BpeMerges::find(int64_t left, int64_t right) const {
  const auto it = table_.find(key(left, right));
  return it == table_.end() ? std::nullopt : std::optional<Merge>(it->second);
}

std::vector<int64_t> BpeMerges::merge(std::vector<int64_t> ids) const {
  const auto n = static_cast<int64_t>(ids.size());
  if (n < 2) return ids;
  // Symbols form a list over the positions; a merge keeps the left position and unlinks the right.
  std::vector<int64_t> prev(static_cast<size_t>(n)), next(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) prev[static_cast<size_t>(i)] = i - 1, next[static_cast<size_t>(i)] = i + 1 < n ? i + 1 : -1;
  std::vector<char> removed(static_cast<size_t>(n), 0);

  struct Candidate {
    int64_t rank, pos, merged;
  };
  const auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  const auto push = [&](int64_t left) {
    const int64_t right = next[static_cast<size_t>(left)];
    if (right < 0) return;
    if (const auto m = find(ids[static_cast<size_t>(left)], ids[static_cast<size_t>(right)]))
      queue.push({m->rank, left, m->merged});
  };
  for (int64_t i = 0; i + 1 < n; ++i) push(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    const auto pos = static_cast<size_t>(top.pos);
    if (removed[pos] || next[pos] < 0) continue;
    const auto right = static_cast<size_t>(next[pos]);
    // A stale entry: one of its symbols has merged since it was pushed.
    const auto now = find(ids[pos], ids[right]);
    if (!now || now->merged != top.merged) continue;
    ids[pos] = top.merged;
    removed[right] = 1;
    next[pos] = next[right];
    if (next[right] >= 0) prev[static_cast<size_t>(next[right])] = top.pos;
    if (prev[pos] >= 0) push(prev[pos]);
    push(top.pos);
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i >= 0; i = next[static_cast<size_t>(i)]) out.push_back(ids[static_cast<size_t>(i)]);
  return out;
}

}  // namespace svqa
