#include "engine/snapshot/snapshot_log.h"


namespace svqa {
namespace {

constexpr int64_t kBlockAlignment = 64;  // a block's K/V start here, so every mapped tensor is aligned

nlohmann::json optional_ref(const at::Tensor& t, SnapshotDataWriter& data) {
  return t.defined() ? ref_json(data.write(t)) : nlohmann::json(nullptr);
}

const nlohmann::json& field(const nlohmann::json& j, const char* key, const std::string& what) {
  if (!j.is_object() || !j.contains(key)) throw SnapshotDamaged(what + ": no \"" + key + "\"");
  return j.at(key);
}

}  // namespace

nlohmann::json write_blocks(const MemoryBank& bank, int64_t first, SnapshotDataWriter& data) {
  nlohmann::json out = nlohmann::json::array();
  for (int64_t id = first; id < bank.size(); ++id) {
    const KvBlock b = bank.block(id);  // K/V mapped back if the block has spilled already
    nlohmann::json j{{"granularity", static_cast<int>(b.granularity)}, {"first_frame", b.first_frame},
                     {"last_frame", b.last_frame}, {"start_time", b.start_time}, {"end_time", b.end_time}};
    j["positions"] = optional_ref(b.positions, data);
    nlohmann::json reps = nlohmann::json::array();
    for (size_t l = 0; l < b.keys.size(); ++l)
      reps.push_back(optional_ref(bank.representative(id, static_cast<int64_t>(l)), data));
    j["representatives"] = std::move(reps);
    data.align(kBlockAlignment);
    j["base"] = data.size();
    nlohmann::json kv = nlohmann::json::array();
    for (size_t l = 0; l < b.keys.size(); ++l)
      for (const at::Tensor* t : {&b.keys[l], &b.values[l]}) kv.push_back(optional_ref(*t, data));
    j["kv"] = std::move(kv);
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json write_sinks(const SinkKv& sinks, SnapshotDataWriter& data) {
  nlohmann::json keys = nlohmann::json::array(), values = nlohmann::json::array();
  bool on_device = false;
  for (size_t l = 0; l < sinks.keys.size(); ++l) {
    keys.push_back(optional_ref(sinks.keys[l], data));
    values.push_back(optional_ref(sinks.values[l], data));
    on_device = on_device || (sinks.keys[l].defined() && !sinks.keys[l].is_cpu());
  }
  return {{"positions", optional_ref(sinks.positions, data)}, {"keys", keys}, {"values", values},
          {"positions_on_device", sinks.positions.defined() && !sinks.positions.is_cpu()}, {"on_device", on_device}};
}

void add_logged_blocks(const nlohmann::json& blocks, const SnapshotDataReader& data, MemoryBank& bank) {
  const std::string what = data.path() + " (index)";
  if (!blocks.is_array()) throw SnapshotDamaged(what + ": blocks are not a list");
  for (const auto& j : blocks) {
    KvBlock b;
    const int g = field(j, "granularity", what).get<int>();
    if (g < 0 || g >= kGranularities) throw SnapshotDamaged(what + ": unknown granularity");
    b.granularity = static_cast<Granularity>(g);
    b.first_frame = field(j, "first_frame", what).get<int64_t>();
    b.last_frame = field(j, "last_frame", what).get<int64_t>();
    b.start_time = field(j, "start_time", what).get<double>();
    b.end_time = field(j, "end_time", what).get<double>();
    if (!field(j, "positions", what).is_null()) b.positions = data.read(ref_from_json(j["positions"], what));
    for (const auto& r : field(j, "representatives", what))
      b.representatives.push_back(r.is_null() ? at::Tensor() : data.read(ref_from_json(r, what)));
    MappedKv kv;
    kv.file = data.path();
    kv.held = data.held();  // read through the open file: the snapshot may leave the cache meanwhile
    kv.growing = data.growing();
    kv.base = field(j, "base", what).get<int64_t>();
    int64_t expected = kv.base;  // K/V lie back to back from the base: the spill layout
    for (const auto& r : field(j, "kv", what)) {
      if (r.is_null()) {
        kv.shapes.emplace_back(), kv.dtypes.push_back(at::kFloat), kv.sums.push_back(0);
        continue;
      }
      const TensorRef ref = ref_from_json(r, what);
      if (ref.offset != expected) throw SnapshotDamaged(what + ": K/V of a block not back to back");
      expected += ref.bytes();
      kv.shapes.push_back(ref.shape), kv.dtypes.push_back(ref.dtype), kv.sums.push_back(ref.sum);
    }
    kv.file_bytes = data.file_bytes(expected);
    if (expected > kv.file_bytes) throw SnapshotDamaged(data.path() + ": ends before byte " + std::to_string(expected));
    bank.add_mapped(std::move(b), std::move(kv));
  }
}

SinkKv read_sinks(const nlohmann::json& sinks, const SnapshotDataReader& data, const at::Device& device) {
  const std::string what = data.path() + " (sinks)";
  SinkKv s;
  const bool on_device = field(sinks, "on_device", what).get<bool>();
  auto read = [&](const nlohmann::json& r, bool to_device) {
    if (r.is_null()) return at::Tensor();
    const at::Tensor t = data.read(ref_from_json(r, what));
    return to_device ? t.to(device) : t;
  };
  if (!field(sinks, "positions", what).is_null())
    s.positions = read(sinks["positions"], field(sinks, "positions_on_device", what).get<bool>());
  for (const auto& r : field(sinks, "keys", what)) s.keys.push_back(read(r, on_device));
  for (const auto& r : field(sinks, "values", what)) s.values.push_back(read(r, on_device));
  return s;
}

}  // namespace svqa
