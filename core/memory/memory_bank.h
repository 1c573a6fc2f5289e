#pragma once
// Store of KvBlocks with exact accounting and a disk tier. Blocks are added in order (ids dense from
// 0, never reused); an encoder may take a block out of a layer or evict it (eviction), or rewrite a
// layer (compaction: replace_layer), and accounting, representatives and the disk tier follow.
//
// Block tensors live on the CPU (pinned when the compute device is CUDA, for fast copies). Once
// resident K/V bytes pass `ram_budget_bytes`, the oldest resident blocks are written to one file
// each under `spill_dir` and dropped from RAM; `block(id)` maps a spilled block's file back
// (mmap, read-only, bit-exact) for as long as the caller holds its tensors. Representative vectors
// stay resident on the compute device, one growable matrix per layer, where retrieval scores them.
// Under a KV codec other than identity a block's K/V are coded on add() and decoded on every read
// (block(), read_layer()); RAM, the spill files and the accounting hold the coded bytes.
// A spilled block is checked when read back (the file's size, each tensor's checksum64): a file
// overwritten, cut short or swapped for another block throws EnvironmentError naming it, as does
// a failed write or read (disk full, I/O error), so no question is answered from a changed block.

#include <ATen/ATen.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/io/environment_error.h"
#include "core/memory/held_file.h"
#include "core/memory/kv_block.h"
#include "core/memory/kv_codec.h"

namespace svqa {

struct MemoryBankOptions {
  int64_t num_layers = 0;
  at::Device device = at::kCPU;  // where representative vectors are kept and scored
  int64_t ram_budget_bytes = -1; // resident K/V bytes before spilling to disk; < 0: never spill
  std::string spill_dir;         // required when ram_budget_bytes >= 0
  KvCodecOptions codec{};        // how K/V are stored (core/memory/kv_codec.h); identity: as given
};

// Where a block's K/V already lie in a file written by someone else (a memory snapshot, in the
// spill layout: per layer K then V, back to back from `base`). The bank maps them from there,
// never writes or removes that file, and checks each tensor's checksum64 when it is read.
// With `held`, every read goes through that open file (kept open until the block is evicted or
// the bank goes), so the file removed from its folder meanwhile still reads; without, `file` is
// opened by name at each read.
struct MappedKv {
  std::string file;
  std::shared_ptr<const HeldFile> held;
  int64_t file_bytes = 0;  // the file's size when written: checked whenever it is opened
  bool growing = false;    // still being appended to (a snapshot being written): checked to reach the block's end
  int64_t base = 0;        // byte offset of the block's first tensor
  std::vector<std::vector<int64_t>> shapes;  // per layer K then V; empty: absent from the layer
  std::vector<at::ScalarType> dtypes;
  std::vector<uint64_t> sums;
};

// A mapped block's file (MappedKv) whose bytes are not those written: thrown instead of answering
// from it, naming the file, so the owner of the file (the memory cache) can drop it and re-encode.
class MappedFileChanged : public EnvironmentError {
 public:
  MappedFileChanged(const std::string& file, const std::string& what) : EnvironmentError(what), file_(file) {}
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

struct MemoryAccounting {
  int64_t blocks = 0, tokens = 0;  // blocks stored in at least one layer, and their tokens
  int64_t layer_tokens = 0;        // tokens summed over the layers that store them (= tokens × layers when every block is in every layer)
  int64_t ram_bytes = 0, disk_bytes = 0;  // K/V bytes per tier
  int64_t representative_bytes = 0;
  std::array<int64_t, kGranularities> tokens_by_granularity{}, bytes_by_granularity{};
};

class MemoryBank {
 public:
  explicit MemoryBank(MemoryBankOptions options);
  ~MemoryBank();
  MemoryBank(const MemoryBank&) = delete;
  MemoryBank& operator=(const MemoryBank&) = delete;

  // Takes the block (tensors moved to CPU); returns its id. Spills old blocks past the budget.
  int64_t add(KvBlock block);
  // A block whose K/V stay in `kv`'s file (mapped when read, as a spilled block): `block` has its
  // metadata, positions and representatives, no keys or values. Accounted as add() accounts a
  // block (resident until the budget would spill it), so the records equal those of a bank built
  // by add(); RAM holds only what is read.
  int64_t add_mapped(KvBlock block, MappedKv kv);
  // Takes block `id` out of `layer` (it must be stored there): it no longer reads as stored there,
  // its representative row goes and its tokens leave layer_tokens. A block's K/V are one allocation
  // (or one spill file), so its bytes stay held, and counted in ram_bytes or disk_bytes, until it
  // leaves its last layer: it is then evicted, its RAM or spill file freed (a memory snapshot's file
  // is never removed), and it leaves every count. To shrink a block's bytes now, rewrite it: add()
  // the block with only what stays, then remove() the old one. Its span and granularity stay:
  // info(id) still answers (without K/V or positions once evicted), ids never move.
  void remove_from_layer(int64_t id, int64_t layer);
  // Takes block `id` out of every layer it is stored in (evicts it).
  void remove(int64_t id);
  // Ids of the blocks `layer` stores, ascending (the order they were added).
  std::vector<int64_t> blocks_in_layer(int64_t layer) const;
  // Layer `layer`'s memory: the K/V (as block() reads them) and positions of every block it stores,
  // in id order, as one run of tokens; empty tensors when it stores none.
  LayerMemory layer_memory(int64_t layer) const;
  // Rewrites layer `layer` (a compaction): `kept` (what the layer keeps, K/V un-rotated, at their
  // positions) becomes one Segment block stored in that layer only, spanning the frames and times of
  // every block the layer stored; those leave the layer (remove_from_layer: one leaving its last layer
  // is evicted), and the heap's free pages go back to the system once any was. A compaction method
  // chooses what to keep; the bank owns the rewrite. Returns the new block's id.
  int64_t replace_layer(int64_t layer, LayerMemory kept);
  // The block with its K/V tensors (mapped from disk if spilled) and everything else add() was
  // given, except `representatives`: those live in one matrix per layer and come back empty here;
  // read them with representative(id, layer) or representatives(layer). Throws std::out_of_range for a bad id.
  KvBlock block(int64_t id) const;
  // Copies layer `layer` of block `id` into k and v ([n, kv_heads, d] views, any device and dtype):
  // from RAM (non-blocking from pinned memory), or read from its spill file straight into them when
  // they are contiguous CPU tensors of the stored dtype, else through a buffer (pinned for a GPU).
  // The block must be present in the layer.
  void read_layer(int64_t id, int64_t layer, const at::Tensor& k, const at::Tensor& v) const;
  // [n, kv_heads, d] of block `id`'s keys in `layer` (resident or spilled); empty where absent.
  std::vector<int64_t> key_shape(int64_t id, int64_t layer) const;
  // Block `id`'s representative vector in `layer` as stored ([dim] float32 on the bank's device, a
  // view into the layer's matrix: do not write to it); undefined when it has none in that layer.
  at::Tensor representative(int64_t id, int64_t layer) const;
  // Metadata (span, granularity, positions); its K/V tensors are empty once spilled and coded under
  // a codec (use block()), its representatives always empty (use representative()).
  const KvBlock& info(int64_t id) const;
  // Whether block `id` has K/V in `layer` (resident or spilled).
  bool in_layer(int64_t id, int64_t layer) const;
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }

  // Representative vectors of every block present in `layer`: matrix [n, dim] on the device and
  // the block id of each row.
  at::Tensor representatives(int64_t layer) const;
  const std::vector<int64_t>& representative_ids(int64_t layer) const;

  const MemoryAccounting& accounting() const { return accounting_; }
  bool spilled(int64_t id) const;

 private:
  struct Entry;
  void spill_oldest_resident();
  void check_in_layer(int64_t id, int64_t layer) const;  // throws std::invalid_argument unless in_layer
  void remove_representative(int64_t id, int64_t layer);
  void evict(Entry& e);
  void add_representatives(KvBlock& block);
  int64_t add_entry(std::unique_ptr<Entry> e, int64_t kv_bytes);

  MemoryBankOptions options_;
  KvCodec codec_;
  std::vector<std::unique_ptr<Entry>> entries_;
  int64_t next_resident_ = 0;  // oldest block that may still be resident
  std::vector<at::Tensor> rep_matrix_;             // per layer [capacity, dim]
  std::vector<int64_t> rep_rows_;                  // per layer rows used
  std::vector<std::vector<int64_t>> rep_ids_;      // per layer block id per row
  MemoryAccounting accounting_;
};

}  // namespace svqa
