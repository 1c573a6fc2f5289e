#include "engine/memory_contract.h"

namespace svqa {
namespace {

std::string names(const std::set<Granularity>& gs) {
  std::string out;
  for (const auto g : gs) out += (out.empty() ? "" : ", ") + std::string(granularity_name(g));
  return out;
}

}  // namespace

const char* representatives_name(Representatives r) {
  switch (r) {
    case Representatives::None: return "no representatives";
    case Representatives::MeanKeyEveryLayer: return "ReKV's mean-key representatives in every layer";
    case Representatives::RotatedKeyLastLayer: return "MuKV's rotated-key representatives in the last layer only";
  }
  return "?";
}

std::string contract_problem(const std::string& encoder, const EncoderProvides& provides, const std::string& retrieval,
                             const RetrievalNeeds& needs) {
  const std::string pair = retrieval + " cannot read the blocks of encoding.type " + encoder + ": ";
  if (needs.representatives != Representatives::None && needs.representatives != provides.representatives)
    return pair + retrieval + " scores " + representatives_name(needs.representatives) + ", " + encoder + " stores " +
           representatives_name(provides.representatives);
  for (const auto g : needs.all_of)
    if (!provides.granularities.count(g))
      return pair + retrieval + " needs " + granularity_name(g) + " blocks, " + encoder + " (with these options) stores " +
             names(provides.granularities);
  bool any = needs.any_of.empty();
  for (const auto g : needs.any_of) any = any || provides.granularities.count(g);
  if (!any)
    return pair + retrieval + " (with these options) brings back only " + names(needs.any_of) + " blocks, " + encoder +
           " (with these options) stores " + names(provides.granularities);
  return "";
}

std::string context_window_problem(const std::string& encoder, const EncoderProvides& provides, double window_s) {
  if (window_s <= 0 || !provides.whole_past_blocks) return "";
  return "encoding.type " + encoder +
         " compacts its memory into blocks spanning the whole past [0, t], which stream.context_window_s cannot cut by "
         "time (a question would see the sink tokens only): set stream.context_window_s: 0 or an encoding.type with "
         "per-frame blocks";
}

std::string snapshot_problem(const std::string& encoder, const EncoderTraits& traits) {
  const std::string head = "encoding.type " + encoder;
  switch (traits.memory) {
    case MemoryWrites::Appends: return "";
    case MemoryWrites::Rewrites:
      return head + " evicts and rewrites the blocks it added, which a memory snapshot (a log of the blocks each "
                    "call adds) cannot replay: leave memory.cache empty";
    case MemoryWrites::AtQuestion:
      return head + " builds its memory at each question, so there is nothing to save before it: leave "
                    "memory.cache empty";
  }
  return "";
}

std::string codec_problem(const std::string& encoder, const EncoderTraits& traits, const std::string& codec) {
  if (codec == "identity" || traits.memory != MemoryWrites::AtQuestion) return "";
  return "encoding.type " + encoder + " answers each question from a bank it builds at the question, which " +
         "stream.kv_codec (" + codec + ") never codes: use kv_codec: identity";
}

}  // namespace svqa
