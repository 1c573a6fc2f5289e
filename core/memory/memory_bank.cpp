#include "core/memory/memory_bank.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "core/memory/bank_entry.h"
#include "core/memory/spill_file.h"
#include "core/nn/large_allocations.h"

namespace svqa {

MemoryBank::MemoryBank(MemoryBankOptions options)
    : options_(std::move(options)),
      codec_(options_.codec),
      rep_matrix_(options_.num_layers),
      rep_rows_(options_.num_layers, 0),
      rep_ids_(options_.num_layers) {
  if (options_.ram_budget_bytes >= 0) {
    if (options_.spill_dir.empty()) throw std::invalid_argument("memory bank: a RAM budget needs a spill directory");
    std::filesystem::create_directories(options_.spill_dir);
    // Freed blocks must go back to the OS, or resident memory would keep growing past the budget.
    map_large_allocations();
  }
}

MemoryBank::~MemoryBank() {
  std::error_code ignored;  // a destructor must not throw (it runs while a spill error unwinds)
  for (const auto& e : entries_)
    if (!e->file.empty() && !e->external) std::filesystem::remove(e->file, ignored);
}

int64_t MemoryBank::add(KvBlock block) {
  if (static_cast<int64_t>(block.keys.size()) != options_.num_layers || block.values.size() != block.keys.size())
    throw std::invalid_argument("memory bank: a block needs keys and values for " + std::to_string(options_.num_layers) +
                                " layers (undefined where absent)");
  block.id = size();
  auto e = std::make_unique<Entry>();
  if (!codec_.identity()) {
    e->plain = encode_kv(codec_, block.keys, block.values);
    e->coded = true;
  }
  // A block's K/V live in one host allocation (pinned for a GPU): large enough for the allocator to
  // map it on its own and hand it back whole when the block spills. Tens of separate per-layer
  // tensors (~100 KiB each) would sit in the heap, where freed ones fragment it and resident memory
  // keeps growing past the budget (measured: +0.3 MiB per frame over a 1-hour stream).
  std::vector<at::Tensor*> parts;
  int64_t numel = 0;
  for (size_t l = 0; l < block.keys.size(); ++l)
    for (auto* t : {&block.keys[l], &block.values[l]})
      if (t->defined()) parts.push_back(t), numel += t->numel();
  if (!parts.empty()) {
    const auto dtype = parts.front()->scalar_type();
    for (const auto* t : parts)
      if (t->scalar_type() != dtype) throw std::invalid_argument("memory bank: a block's keys and values differ in dtype");
    const auto slab = at::empty({numel}, at::TensorOptions().dtype(dtype).pinned_memory(options_.device.is_cuda()));
    int64_t offset = 0;
    for (auto* t : parts) {
      auto view = slab.narrow(0, offset, t->numel()).view(t->sizes());
      view.copy_(*t);
      offset += t->numel();
      *t = std::move(view);
    }
  }
  add_representatives(block);
  const int64_t kv_bytes = block.kv_bytes();
  e->block = std::move(block);
  return add_entry(std::move(e), kv_bytes);
}

int64_t MemoryBank::add_mapped(KvBlock block, MappedKv kv) {
  if (static_cast<int64_t>(kv.shapes.size()) != 2 * options_.num_layers || kv.dtypes.size() != kv.shapes.size() ||
      kv.sums.size() != kv.shapes.size())
    throw std::invalid_argument("memory bank: a mapped block needs K and V layouts for " +
                                std::to_string(options_.num_layers) + " layers");
  block.id = size();
  block.keys.assign(static_cast<size_t>(options_.num_layers), at::Tensor());
  block.values.assign(static_cast<size_t>(options_.num_layers), at::Tensor());
  add_representatives(block);
  auto e = std::make_unique<Entry>();
  for (size_t i = 0; i < kv.shapes.size(); ++i) {
    e->offsets.push_back(e->bytes);
    e->bytes += tensor_bytes_of(kv.shapes[i], kv.dtypes[i]);
  }
  e->file = std::move(kv.file);
  e->held = std::move(kv.held);
  e->base = kv.base;
  e->file_bytes = kv.growing ? kv.base + e->bytes : kv.file_bytes;
  e->growing = kv.growing;
  e->external = true;
  e->shapes = std::move(kv.shapes);
  e->dtypes = std::move(kv.dtypes);
  e->sums = std::move(kv.sums);
  e->block = std::move(block);
  const int64_t kv_bytes = e->bytes;
  return add_entry(std::move(e), kv_bytes);
}

void MemoryBank::add_representatives(KvBlock& block) {
  block.representatives.resize(block.keys.size());
  for (int64_t l = 0; l < options_.num_layers; ++l) {
    const auto& rep = block.representatives[l];
    if (!rep.defined()) continue;
    auto& m = rep_matrix_[l];
    if (!m.defined() || rep_rows_[l] == m.size(0)) {  // grow by doubling, as the RI's VectorTensor
      auto bigger = at::empty({std::max<int64_t>(16, 2 * rep_rows_[l]), rep.numel()},
                              at::TensorOptions().dtype(at::kFloat).device(options_.device));
      if (rep_rows_[l]) bigger.narrow(0, 0, rep_rows_[l]).copy_(m.narrow(0, 0, rep_rows_[l]));
      m = bigger;
    }
    m[rep_rows_[l]++].copy_(rep.flatten());
    rep_ids_[l].push_back(block.id);
    accounting_.representative_bytes += rep.numel() * 4;
  }
  block.representatives.clear();  // they live in the matrices
}

int64_t MemoryBank::add_entry(std::unique_ptr<Entry> e, int64_t kv_bytes) {
  const KvBlock& block = e->block;
  e->bytes = kv_bytes;

  const auto g = static_cast<size_t>(block.granularity);
  accounting_.blocks += 1;
  accounting_.tokens += block.num_tokens();
  for (size_t l = 0; l < block.keys.size(); ++l)
    if (e->external ? !e->shapes[2 * l].empty() : block.keys[l].defined()) accounting_.layer_tokens += block.num_tokens();
  accounting_.ram_bytes += e->bytes;
  accounting_.tokens_by_granularity[g] += block.num_tokens();
  accounting_.bytes_by_granularity[g] += e->bytes;
  entries_.push_back(std::move(e));
  bool spilled_any = false;
  while (options_.ram_budget_bytes >= 0 && accounting_.ram_bytes > options_.ram_budget_bytes &&
         next_resident_ < size())
    spill_oldest_resident(), spilled_any = true;
  // Each block leaves small long-lived allocations (its metadata) in holes of the heap that the
  // encoder's per-frame temporaries left, so the heap's free pages stay resident and grow with the
  // stream (measured: +35 KiB per frame, RSS 1.12 × its 10-minute value after an hour). Once the
  // budget is reached, hand the free pages back as blocks leave RAM.
  if (spilled_any) release_free_heap();
  return entries_.back()->block.id;
}

void MemoryBank::spill_oldest_resident() {
  Entry& e = *entries_[next_resident_++];
  if (e.evicted) return;  // nothing left to write
  if (e.external) {  // already on disk: only the accounting moves it to the disk tier
    accounting_.ram_bytes -= e.bytes;
    accounting_.disk_bytes += e.bytes;
    return;
  }
  e.write_spill((std::filesystem::path(options_.spill_dir) / ("block_" + std::to_string(e.block.id) + ".kv")).string());
  accounting_.ram_bytes -= e.bytes;
  accounting_.disk_bytes += e.bytes;
}

bool MemoryBank::spilled(int64_t id) const { return !entries_.at(static_cast<size_t>(id))->file.empty(); }

const KvBlock& MemoryBank::info(int64_t id) const {
  if (id < 0 || id >= size()) throw std::out_of_range("memory bank: no block " + std::to_string(id));
  return entries_[static_cast<size_t>(id)]->block;
}

void MemoryBank::check_in_layer(int64_t id, int64_t layer) const {
  if (!in_layer(id, layer))
    throw std::invalid_argument("memory bank: block " + std::to_string(id) + " is not stored in layer " + std::to_string(layer));
}

bool MemoryBank::in_layer(int64_t id, int64_t layer) const {
  const Entry& e = *entries_.at(static_cast<size_t>(id));
  if (e.left_layer(layer)) return false;
  if (e.file.empty()) return e.block.in_layer(layer);
  return layer >= 0 && layer < options_.num_layers && !e.shapes[static_cast<size_t>(2 * layer)].empty();
}

at::Tensor MemoryBank::representative(int64_t id, int64_t layer) const {
  info(id);  // checks the id
  if (layer < 0 || layer >= options_.num_layers) throw std::out_of_range("memory bank: no layer " + std::to_string(layer));
  const auto& ids = rep_ids_[static_cast<size_t>(layer)];
  const auto row = std::lower_bound(ids.begin(), ids.end(), id);  // rows are added in id order
  if (row == ids.end() || *row != id) return {};
  return rep_matrix_[static_cast<size_t>(layer)][row - ids.begin()];
}

KvBlock MemoryBank::block(int64_t id) const {
  KvBlock out = info(id);
  const Entry& e = *entries_[static_cast<size_t>(id)];
  if (!e.file.empty()) e.map_kv(out);
  if (e.coded) decode_kv(codec_, e.plain, out.keys, out.values);
  return e.without_left_layers(out);
}

std::vector<int64_t> MemoryBank::key_shape(int64_t id, int64_t layer) const {
  if (!in_layer(id, layer)) return {};
  const Entry& e = *entries_[static_cast<size_t>(id)];
  if (e.coded) return e.plain.shapes[static_cast<size_t>(2 * layer)];
  return e.file.empty() ? e.block.keys[static_cast<size_t>(layer)].sizes().vec() : e.shapes[static_cast<size_t>(2 * layer)];
}

void MemoryBank::read_layer(int64_t id, int64_t layer, const at::Tensor& k, const at::Tensor& v) const {
  check_in_layer(id, layer);
  const Entry& e = *entries_[static_cast<size_t>(id)];
  const auto l = static_cast<size_t>(layer);
  if (e.coded && e.file.empty()) {
    codec_.decode_into(e.block.keys[l], e.plain.shapes[2 * l], k);
    codec_.decode_into(e.block.values[l], e.plain.shapes[2 * l + 1], v);
    return;
  }
  if (e.file.empty()) {
    k.copy_(e.block.keys[l], /*non_blocking=*/e.block.keys[l].is_pinned());
    v.copy_(e.block.values[l], /*non_blocking=*/e.block.values[l].is_pinned());
    return;
  }
  if (!e.coded) {
    e.read_spilled(l, k, v);
    return;
  }
  // The coded bytes read whole, then decoded into k and v.
  const at::Tensor ck = at::empty(e.shapes[2 * l], at::kByte), cv = at::empty(e.shapes[2 * l + 1], at::kByte);
  e.read_spilled(l, ck, cv);
  codec_.decode_into(ck, e.plain.shapes[2 * l], k);
  codec_.decode_into(cv, e.plain.shapes[2 * l + 1], v);
}

void MemoryBank::remove_from_layer(int64_t id, int64_t layer) {
  check_in_layer(id, layer);
  Entry& e = *entries_[static_cast<size_t>(id)];
  e.removed.resize(static_cast<size_t>(options_.num_layers), false);
  e.removed[static_cast<size_t>(layer)] = true;
  remove_representative(id, layer);
  accounting_.layer_tokens -= e.block.num_tokens();
  for (int64_t l = 0; l < options_.num_layers; ++l)
    if (in_layer(id, l)) return;
  evict(e);
}

void MemoryBank::remove(int64_t id) {
  for (int64_t l = 0; l < options_.num_layers; ++l)
    if (in_layer(id, l)) remove_from_layer(id, l);
}

std::vector<int64_t> MemoryBank::blocks_in_layer(int64_t layer) const {
  std::vector<int64_t> ids;
  for (int64_t id = 0; id < size(); ++id)
    if (in_layer(id, layer)) ids.push_back(id);
  return ids;
}

LayerMemory MemoryBank::layer_memory(int64_t layer) const {
  std::vector<at::Tensor> keys, values, positions;
  for (const int64_t id : blocks_in_layer(layer)) {
    const KvBlock b = block(id);
    keys.push_back(b.keys[static_cast<size_t>(layer)]);
    values.push_back(b.values[static_cast<size_t>(layer)]);
    positions.push_back(b.positions);
  }
  if (keys.empty()) return {};
  return {at::cat(keys), at::cat(values), at::cat(positions, 1)};
}

int64_t MemoryBank::replace_layer(int64_t layer, LayerMemory kept) {
  const auto replaced = blocks_in_layer(layer);
  const auto where = "memory bank: a rewrite of layer " + std::to_string(layer);
  if (replaced.empty()) throw std::invalid_argument(where + ": the layer holds no block to replace");
  if (!kept.keys.defined() || !kept.values.defined() || !kept.positions.defined() ||
      kept.keys.sizes() != kept.values.sizes() || kept.positions.size(-1) != kept.keys.size(0))
    throw std::invalid_argument(where + " needs the keys, values and positions of the same tokens it keeps");
  KvBlock block = layer_only_block(options_.num_layers, layer, std::move(kept), Granularity::Segment);
  block.first_frame = info(replaced.front()).first_frame, block.last_frame = info(replaced.front()).last_frame;
  block.start_time = info(replaced.front()).start_time, block.end_time = info(replaced.front()).end_time;
  for (const int64_t id : replaced) widen_span(block, info(id));
  const int64_t id = add(std::move(block));
  const int64_t blocks = accounting_.blocks;
  for (const int64_t old : replaced) remove_from_layer(old, layer);
  // The evicted blocks' small allocations leave holes in the heap that would otherwise stay resident
  // and grow with the stream (measured on InfiniPot-V over an hour, docs/performance.md).
  if (accounting_.blocks < blocks) release_free_heap();
  return id;
}

void MemoryBank::evict(Entry& e) {
  const auto g = static_cast<size_t>(e.block.granularity);
  (e.block.id < next_resident_ ? accounting_.disk_bytes : accounting_.ram_bytes) -= e.bytes;
  accounting_.blocks -= 1;
  accounting_.tokens -= e.block.num_tokens();
  accounting_.tokens_by_granularity[g] -= e.block.num_tokens();
  accounting_.bytes_by_granularity[g] -= e.bytes;
  std::error_code ignored;  // a spill file already gone is what eviction wants
  if (!e.file.empty() && !e.external) std::filesystem::remove(e.file, ignored);
  e.file.clear();
  e.held.reset();  // the last block of a snapshot lets its file go
  std::fill(e.block.keys.begin(), e.block.keys.end(), at::Tensor());
  std::fill(e.block.values.begin(), e.block.values.end(), at::Tensor());
  // Its positions and spill layout go too: an encoder that compacts for hours evicts thousands of
  // blocks, and their metadata would otherwise grow with the stream.
  e.block.positions = at::Tensor();
  e.shapes = {}, e.dtypes = {}, e.offsets = {}, e.sums = {};
  e.plain = {};
  e.bytes = 0;
  e.evicted = true;
}

void MemoryBank::remove_representative(int64_t id, int64_t layer) {
  const auto l = static_cast<size_t>(layer);
  auto& ids = rep_ids_[l];
  const auto it = std::lower_bound(ids.begin(), ids.end(), id);
  if (it == ids.end() || *it != id) return;
  const int64_t row = it - ids.begin(), after = rep_rows_[l] - row - 1;
  auto& m = rep_matrix_[l];
  if (after > 0) m.narrow(0, row, after).copy_(m.narrow(0, row + 1, after).clone());
  rep_rows_[l] -= 1;
  ids.erase(it);
  accounting_.representative_bytes -= m.size(1) * 4;
}

at::Tensor MemoryBank::representatives(int64_t layer) const {
  const auto& m = rep_matrix_.at(static_cast<size_t>(layer));
  if (!m.defined()) return at::empty({0, 0}, at::TensorOptions().dtype(at::kFloat).device(options_.device));
  return m.narrow(0, 0, rep_rows_[layer]);
}

const std::vector<int64_t>& MemoryBank::representative_ids(int64_t layer) const {
  return rep_ids_.at(static_cast<size_t>(layer));
}

}  // namespace svqa
