#include "core/memory/memory_bank.h"

#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/io/checksum.h"
#include "core/io/environment_error.h"
#include "core/nn/large_allocations.h"

namespace svqa {
namespace {

int64_t tensor_bytes(const at::Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0; }

int64_t tensor_bytes_of(const std::vector<int64_t>& shape, at::ScalarType dtype) {
  if (shape.empty()) return 0;
  int64_t n = static_cast<int64_t>(c10::elementSize(dtype));
  for (const int64_t s : shape) n *= s;
  return n;
}

// A spill file that cannot be written or read is the machine's failure, not the question's.
EnvironmentError io_error(const std::string& path, const std::string& what, int why = errno) {
  return EnvironmentError(path + ": " + what + ": " + std::strerror(why));
}

// A spill file whose bytes are not the ones written (overwritten, truncated, another run's block):
// the question must not be answered from it.
EnvironmentError changed_error(const std::string& path, const std::string& why) {
  return EnvironmentError(path + ": spill file changed since it was written (" + why +
                          "); not answered from it: rerun to retry the question");
}

// changed_error, or for a file the bank does not own (a memory snapshot) MappedFileChanged.
[[noreturn]] void throw_changed(const std::string& path, bool external, const std::string& why) {
  if (external)
    throw MappedFileChanged(path, path + ": memory snapshot changed since it was written (" + why + ")");
  throw changed_error(path, why);
}

// Opens a spilled block's file for reading (through `held` when the bank holds it open) and
// checks that it still has the size written (at least `bytes` when `at_least`: a file still being
// appended to).
int open_spilled(const std::string& path, const HeldFile* held, int64_t bytes, bool external, bool at_least = false) {
  const int fd = held ? held->duplicate() : ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw io_error(path, "cannot open spill file");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int why = errno;
    ::close(fd);
    throw io_error(path, "cannot stat spill file", why);
  }
  if (at_least ? st.st_size < bytes : st.st_size != bytes) {
    ::close(fd);
    throw_changed(path, external, std::to_string(st.st_size) + " bytes, " + std::to_string(bytes) + " written");
  }
  return fd;
}

// A read-only mapping of a spilled block's file, unmapped when the last tensor viewing it goes.
struct Mapping {
  void* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data) munmap(data, size);
  }
};

}  // namespace

const char* granularity_name(Granularity g) {
  switch (g) {
    case Granularity::Patch: return "patch";
    case Granularity::Frame: return "frame";
    case Granularity::Segment: return "segment";
    case Granularity::Summary: return "summary";
  }
  return "?";
}

at::Tensor mean_key_representative(const at::Tensor& keys) { return keys.to(at::kFloat).mean(0).flatten(); }

at::Tensor grouped_query(const at::Tensor& mean_query, int64_t kv_heads) {
  return mean_query.view({kv_heads, -1, mean_query.size(-1)}).sum(1).flatten();
}

int64_t KvBlock::kv_bytes() const {
  int64_t n = 0;
  for (size_t l = 0; l < keys.size(); ++l) n += tensor_bytes(keys[l]) + tensor_bytes(values[l]);
  return n;
}

struct MemoryBank::Entry {
  KvBlock block;  // keys/values emptied once spilled
  std::string file;
  // Layout of the spilled file: per layer K then V, each tensor's shape and dtype kept here.
  std::vector<std::vector<int64_t>> shapes;
  std::vector<at::ScalarType> dtypes;
  std::vector<int64_t> offsets;  // byte offset of each tensor in the file
  std::vector<uint64_t> sums;    // checksum64 of each tensor's bytes, checked when read back
  int64_t bytes = 0;
  int64_t file_bytes = 0;  // the file's size when written
  int64_t base = 0;        // where the block's first tensor starts in the file
  bool external = false;   // a MappedKv file: never written or removed here
  std::shared_ptr<const HeldFile> held;  // MappedKv::held: the open file reads go through
  bool coded = false;      // K/V (resident or spilled) in the codec's coded form, decoded on read
  PlainKvLayout plain;     // when coded: what the K/V were
  std::vector<bool> removed;  // per layer: taken out of it (remove_from_layer); its K/V stay held until evicted
  bool evicted = false;    // left every layer: K/V freed, out of every count

  bool left_layer(int64_t layer) const { return layer >= 0 && layer < static_cast<int64_t>(removed.size()) && removed[layer]; }
  // Empties the K/V of the layers the block left, in a copy of it handed out.
  KvBlock& without_left_layers(KvBlock& out) const {
    for (size_t l = 0; l < out.keys.size(); ++l)
      if (left_layer(static_cast<int64_t>(l))) out.keys[l] = out.values[l] = at::Tensor();
    return out;
  }
  bool growing = false;    // MappedKv::growing: file_bytes is the block's end, the least the file may hold
};

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
#if defined(__GLIBC__)
  // Each block leaves small long-lived allocations (its metadata) in holes of the heap that the
  // encoder's per-frame temporaries left, so the heap's free pages stay resident and grow with the
  // stream (measured: +35 KiB per frame, RSS 1.12 × its 10-minute value after an hour). Once the
  // budget is reached, hand the free pages back as blocks leave RAM.
  if (spilled_any) malloc_trim(0);
#endif
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
  e.file = (std::filesystem::path(options_.spill_dir) / ("block_" + std::to_string(e.block.id) + ".kv")).string();
  const int fd = ::open(e.file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw io_error(e.file, "cannot create spill file");
  for (size_t l = 0; l < e.block.keys.size(); ++l)
    for (auto* t : {&e.block.keys[l], &e.block.values[l]}) {
      e.offsets.push_back(e.offsets.empty() ? 0 : e.offsets.back() + tensor_bytes_of(e.shapes.back(), e.dtypes.back()));
      e.shapes.push_back(t->defined() ? t->sizes().vec() : std::vector<int64_t>{});
      e.dtypes.push_back(t->defined() ? t->scalar_type() : at::kFloat);
      e.sums.push_back(t->defined() ? checksum64(t->data_ptr(), static_cast<size_t>(tensor_bytes(*t))) : 0);
      if (!t->defined()) continue;
      const char* p = static_cast<const char*>(t->data_ptr());
      for (int64_t left = tensor_bytes(*t); left > 0;) {
        const ssize_t n = ::write(fd, p, static_cast<size_t>(left));
        if (n < 0) {
          const int why = errno;
          ::close(fd);
          throw io_error(e.file, "cannot write spill file", why);
        }
        p += n;
        left -= n;
      }
      *t = at::Tensor();
    }
  if (::close(fd) != 0) throw io_error(e.file, "cannot close spill file");
  e.file_bytes = e.bytes;
  accounting_.ram_bytes -= e.bytes;
  accounting_.disk_bytes += e.bytes;
}

bool MemoryBank::spilled(int64_t id) const { return !entries_.at(static_cast<size_t>(id))->file.empty(); }

const KvBlock& MemoryBank::info(int64_t id) const {
  if (id < 0 || id >= size()) throw std::out_of_range("memory bank: no block " + std::to_string(id));
  return entries_[static_cast<size_t>(id)]->block;
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
  const KvBlock& stored = info(id);
  const Entry& e = *entries_[static_cast<size_t>(id)];
  KvBlock out = stored;
  if (e.file.empty()) {
    if (e.coded) decode_kv(codec_, e.plain, out.keys, out.values);
    return e.without_left_layers(out);
  }
  auto mapping = std::make_shared<Mapping>();
  const int fd = open_spilled(e.file, e.held.get(), e.file_bytes, e.external, e.growing);
  // mmap offsets are whole pages: map from the page holding the block's first byte.
  const int64_t page = sysconf(_SC_PAGESIZE), start = e.base - e.base % page;
  mapping->size = static_cast<size_t>(e.bytes + (e.base - start));
  if (e.bytes > 0) {
    mapping->data = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
    if (mapping->data == MAP_FAILED) {
      const int why = errno;
      mapping->data = nullptr;
      ::close(fd);
      throw io_error(e.file, "cannot map spill file", why);
    }
  }
  ::close(fd);
  char* p = static_cast<char*>(mapping->data) + (e.base - start);
  size_t i = 0;
  for (size_t l = 0; l < out.keys.size(); ++l)
    for (auto* t : {&out.keys[l], &out.values[l]}) {
      const size_t at = i++;
      const auto& shape = e.shapes[at];
      const auto dtype = e.dtypes[at];
      if (shape.empty()) continue;
      if (checksum64(p, static_cast<size_t>(tensor_bytes_of(shape, dtype))) != e.sums[at])
        throw_changed(e.file, e.external, "checksum differs");
      // MAP_PRIVATE pages are copy-on-write, so a caller writing to them never changes the file.
      *t = at::from_blob(p, shape, [mapping](void*) {}, at::TensorOptions().dtype(dtype));
      p += tensor_bytes(*t);
    }
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
  if (!in_layer(id, layer))
    throw std::invalid_argument("memory bank: block " + std::to_string(id) + " is not stored in layer " + std::to_string(layer));
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
  const int fd = open_spilled(e.file, e.held.get(), e.file_bytes, e.external, e.growing);
  auto read_into = [&](size_t i, const at::Tensor& dst) {
    const auto dtype = e.dtypes[i];
    const bool direct = dst.is_cpu() && dst.is_contiguous() && dst.scalar_type() == dtype &&
                        dst.sizes().vec() == e.shapes[i];
    const at::Tensor buffer = direct ? dst : at::empty(e.shapes[i], at::TensorOptions().dtype(dtype).pinned_memory(dst.is_cuda()));
    char* p = static_cast<char*>(buffer.data_ptr());
    int64_t offset = e.base + e.offsets[i];
    for (int64_t left = tensor_bytes(buffer); left > 0;) {
      const ssize_t n = ::pread(fd, p, static_cast<size_t>(left), static_cast<off_t>(offset));
      if (n < 0) {
        const int why = errno;
        ::close(fd);
        throw io_error(e.file, "cannot read spill file", why);
      }
      if (n == 0) {  // cut short after the size check: no errno to report
        ::close(fd);
        throw_changed(e.file, e.external, "ends before byte " + std::to_string(offset));
      }
      p += n, offset += n, left -= n;
    }
    if (checksum64(buffer.data_ptr(), static_cast<size_t>(tensor_bytes(buffer))) != e.sums[i]) {
      ::close(fd);
      throw_changed(e.file, e.external, "checksum differs");
    }
    if (!direct) dst.copy_(buffer, /*non_blocking=*/buffer.is_pinned());
  };
  if (e.coded) {  // the coded bytes read whole, then decoded into k and v
    const auto coded = [&](size_t i) { return at::empty(e.shapes[i], at::kByte); };
    const at::Tensor ck = coded(2 * l), cv = coded(2 * l + 1);
    read_into(2 * l, ck);
    read_into(2 * l + 1, cv);
    ::close(fd);
    codec_.decode_into(ck, e.plain.shapes[2 * l], k);
    codec_.decode_into(cv, e.plain.shapes[2 * l + 1], v);
    return;
  }
  read_into(2 * l, k);
  read_into(2 * l + 1, v);
  ::close(fd);
}

void MemoryBank::remove_from_layer(int64_t id, int64_t layer) {
  if (!in_layer(id, layer))
    throw std::invalid_argument("memory bank: block " + std::to_string(id) + " is not stored in layer " + std::to_string(layer));
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
