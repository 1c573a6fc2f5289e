#pragma once
// A snapshot's log: the calls the runner made on the encoding strategy for one stream, in order,
// each with what it left behind — the blocks it added to the bank, the encoder's next position,
// its sinks (begin_stream) and its record fields (before_question). Replaying the log into an
// empty bank rebuilds, call for call, the bank and encoder state an encoding run had.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/memory/memory_bank.h"
#include "core/memory/sink_kv.h"
#include "engine/snapshot/snapshot_file.h"

namespace svqa {

// Writes blocks `first` .. bank.size()-1 of `bank` into `data` and returns their index entries.
nlohmann::json write_blocks(const MemoryBank& bank, int64_t first, SnapshotDataWriter& data);
nlohmann::json write_sinks(const SinkKv& sinks, SnapshotDataWriter& data);

// Adds the blocks of one log entry to `bank`, their K/V mapped from `data`'s file, which the bank
// holds open from then on (small tensors read and checked now). Throws SnapshotDamaged naming the
// file on a malformed entry.
void add_logged_blocks(const nlohmann::json& blocks, const SnapshotDataReader& data, MemoryBank& bank);
// Sinks on `device` (where the encoder kept them: `on_device` in the entry) and CPU otherwise.
SinkKv read_sinks(const nlohmann::json& sinks, const SnapshotDataReader& data, const at::Device& device);

}  // namespace svqa
