#include "engine/registries.h"

#include <stdexcept>

#include "core/config/experiment.h"
#include "engine/memory_contract.h"

namespace svqa {

Registries::Registries() {
  retrieval.add_rule({"encoding", [](const std::string& retrieval_type, const std::any& needs,
                                     const std::string& encoding_type, const std::any& provides) {
                        return contract_problem(encoding_type, std::any_cast<const EncoderProvides&>(provides),
                                                retrieval_type, std::any_cast<const RetrievalNeeds&>(needs));
                      }});
  encoding.add_header_rule({"stream.context_window_s", [](const std::string& encoding_type, const std::any& provides,
                                                          const ExperimentHeader& header) {
                              return context_window_problem(encoding_type, std::any_cast<const EncoderProvides&>(provides),
                                                            header.stream.context_window_s);
                            }});
  // What the encoder declares it does to memory decides whether snapshots replay it and the codec codes it.
  const auto traits = [](const std::any& provides) { return std::any_cast<const EncoderProvides&>(provides).traits; };
  encoding.add_header_rule({"memory.cache", [traits](const std::string& encoding_type, const std::any& provides,
                                                     const ExperimentHeader& header) {
                              if (header.memory.cache.empty()) return std::string();
                              return snapshot_problem(encoding_type, traits(provides));
                            }});
  encoding.add_header_rule({"stream.kv_codec", [traits](const std::string& encoding_type, const std::any& provides,
                                                        const ExperimentHeader& header) {
                              return codec_problem(encoding_type, traits(provides), header.stream.kv_codec);
                            }});
}

EncoderTraits encoder_traits(const RegistryBase& encoding, const std::string& type, const std::any& options) {
  const RegistryEntryInfo* info = encoding.find_info(type);
  if (!info) throw std::invalid_argument(encoding.unknown_name_message(type));
  if (!info->contract) return {};
  const std::any declared = info->contract(options);
  if (const auto* provides = std::any_cast<EncoderProvides>(&declared)) return provides->traits;
  throw RegistryError("encoding strategy '" + type + "' declares something other than an EncoderProvides");
}

EncoderTraits encoder_traits(const ExperimentConfig& cfg, const RegistrySections& registries) {
  const ComponentChoice* choice = cfg.component("encoding");
  for (const auto& [section, registry] : registries)
    if (section == "encoding" && choice) return encoder_traits(*registry, choice->type, choice->options);
  return {};
}

bool memory_snapshots_fit(const ExperimentConfig& cfg, const RegistrySections& registries) {
  const ComponentChoice* choice = cfg.component("encoding");
  return cfg.header.stream.snapshots_can_replay() &&
         (!choice || snapshot_problem(choice->type, encoder_traits(cfg, registries)).empty());
}

}  // namespace svqa
