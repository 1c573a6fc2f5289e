#pragma once
// What a stream's encoded memory depends on, and the cache key made of it. A snapshot is reused
// only by a run whose key material is equal (compared in full on load, not only by hash).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config_node.h"
#include "engine/benchmark.h"

namespace svqa {

// The export's identity (`backbone_identity`: its files' sizes and checksums, from models.json),
// the resolved backbone and encoding sections, the stream section less what only answering reads,
// the runtime leaves the backbone and the encoder declare they read (`declared`: {leaf: value},
// engine/declared_reads.h; a device by its kind), the frame source's sampled content
// (video_identity.h), the sink prompt's ids, and the stream's questions in the order asked (id,
// time, text): encode calls stop at question times and some encoders change memory at questions
// (StreamKV's open segment, MuKV's carry), so a replay reproduces the encoding only under the same
// question times.
nlohmann::json snapshot_key_material(const ConfigNode& resolved, const nlohmann::json& declared,
                                     const nlohmann::json& backbone_identity, const Stream& stream,
                                     const std::vector<Question>& asked, const std::vector<int64_t>& sink_ids);

// 16 hex digits naming the cache entry.
std::string snapshot_key(const nlohmann::json& material);

}  // namespace svqa
