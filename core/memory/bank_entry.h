#pragma once
// One block as the memory bank stores it (private to core/memory): its metadata and K/V in RAM, or
// the layout of the file they lie in (the bank's spill file, or a memory snapshot it maps), and
// the reads and writes of that file.

#include <memory>
#include <string>
#include <vector>

#include "core/memory/memory_bank.h"

namespace svqa {

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
  bool growing = false;    // MappedKv::growing: file_bytes is the block's end, the least the file may hold

  bool left_layer(int64_t layer) const { return layer >= 0 && layer < static_cast<int64_t>(removed.size()) && removed[layer]; }
  // Empties the K/V of the layers the block left, in a copy of it handed out.
  KvBlock& without_left_layers(KvBlock& out) const {
    for (size_t l = 0; l < out.keys.size(); ++l)
      if (left_layer(static_cast<int64_t>(l))) out.keys[l] = out.values[l] = at::Tensor();
    return out;
  }

  // Writes the resident K/V to `path` (per layer K then V), records their layout and checksums, and
  // drops them from RAM.
  void write_spill(const std::string& path);
  // Sets `out`'s K/V to read-only views of the file, mapped (checked against their checksums).
  void map_kv(KvBlock& out) const;
  // Reads layer `layer`'s K and V from the file into k and v (directly when they are contiguous CPU
  // tensors of the stored shape and dtype, else through a buffer, pinned for a GPU), checked.
  void read_spilled(size_t layer, const at::Tensor& k, const at::Tensor& v) const;
};

}  // namespace svqa
