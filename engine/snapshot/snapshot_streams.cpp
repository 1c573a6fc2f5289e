#include "engine/snapshot/snapshot_streams.h"

#include <filesystem>
#include <fstream>

#include "engine/declared_reads.h"
#include "engine/registries.h"
#include "core/memory/memory_bank.h"
#include "engine/snapshot/model_identity.h"
#include "engine/snapshot/cache_upkeep.h"
#include "engine/snapshot/snapshot_file.h"
#include "engine/snapshot/snapshot_key.h"

namespace svqa {
namespace {

// The backbone's export identity: from the run folder's models.json (checksummed once per run
// already), else computed.
nlohmann::json export_identity(const ExperimentConfig& cfg, const std::string& dir) {
  nlohmann::json all;
  std::ifstream in(dir + "/models.json");
  try {
    all = in ? nlohmann::json::parse(in) : model_identities(cfg.resolved);
  } catch (const nlohmann::json::exception&) {
    all = model_identities(cfg.resolved);
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : all.items())
    if (key.rfind("backbone.", 0) == 0) out[key] = value;
  return out;
}

}  // namespace

SnapshotStreams::SnapshotStreams(const ExperimentConfig& cfg, const RegistrySections& registries,
                                 const std::string& dir, std::ostream& log)
    : cfg_(cfg), log_(log) {
  // Validation refuses a cache its encoder's memory or the codec cannot use (engine/memory_contract.h);
  // a config built past it (svqa grid's shared cache) gets none.
  if (cfg.header.memory.cache.empty() || !memory_snapshots_fit(cfg, registries)) return;
  cache_ = std::make_unique<MemoryCache>(cfg.header.memory.cache);
  export_identity_ = export_identity(cfg, dir);
  declared_ = nlohmann::json::object();
  const auto reads = declared_reads(cfg, registries, {"backbone", "encoding"});
  for (const auto& [leaf, value] : declared_values(cfg.header.runtime, reads)) declared_[leaf] = value;
}

std::unique_ptr<SnapshotSession> SnapshotStreams::open(const Stream& stream, const std::vector<Question>& asked,
                                                       const std::vector<int64_t>& sink_ids,
                                                       EncodingStrategy& encoder) {
  replaying_.clear();
  if (!cache_) return nullptr;
  auto session = std::make_unique<SnapshotSession>(
      *cache_, encoder, snapshot_key_material(cfg_.resolved, declared_, export_identity_, stream, asked, sink_ids),
      cfg_.header.memory.wait_s, log_);
  if (session->replaying()) replaying_ = session->key();
  return session;
}

void SnapshotStreams::finish(SnapshotSession& session, const std::string& stream_id) {
  const bool replayed = session.replaying();
  session.finish();
  log_ << "  memory: " << stream_id << (replayed ? " answered from snapshot " : " encoded, saved as snapshot ")
       << cache_->entry_dir(session.key()) << (session.following() ? " (read as another process wrote it)" : "")
       << "\n";
  replaying_.clear();
  if (const double gb = cfg_.header.memory.max_gb; gb > 0 && !replayed)
    for (const auto& e : shrink_cache(cfg_.header.memory.cache, static_cast<int64_t>(gb * 1e9), session.key()))
      log_ << "  memory cache: removed " << cache_->entry_dir(e.key) << " (" << e.bytes << " bytes, least recently used) "
           << "to stay within memory.max_gb\n";
}

bool SnapshotStreams::drop_if_damaged(const EnvironmentError& e) {
  if (replaying_.empty()) return false;
  const std::string entry = cache_->entry_dir(replaying_);
  const auto* mapped = dynamic_cast<const MappedFileChanged*>(&e);
  const bool damaged = dynamic_cast<const SnapshotDamaged*>(&e) || (mapped && mapped->file().rfind(entry, 0) == 0);
  if (!damaged) return false;
  log_ << "memory cache: " << e.what() << "; not used: encoding the stream again\n";
  cache_->remove(replaying_);
  replaying_.clear();
  return true;
}

}  // namespace svqa
