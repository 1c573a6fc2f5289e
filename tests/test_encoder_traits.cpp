// What an encoder declares it does to memory (EncoderTraits, at its registration) decides, alone,
// which runs validation accepts: every registered encoder × every registered retrieval × memory
// snapshots on/off × a K/V codec on/off is validated here, and the answer expected for each is
// derived from the declared traits and needs by the rules below, stated independently of the code
// that applies them (engine/memory_contract.cpp):
//   - retrieval: a retrieval needing a representative kind reads only an encoder storing that kind;
//     every granularity it needs all of must be stored; of those it needs any of, one must be;
//   - memory.cache: a snapshot logs the blocks each call adds, so it replays only a memory that
//     appends (not one that rewrites its blocks, nor one built at each question);
//   - stream.kv_codec: the codec codes the stream's bank, so it is refused where the memory a
//     question reads is built at the question in a bank of the encoder's own;
//   - memory.cache with stream.kv_codec: snapshots hold K/V as the model gives them (any encoder).
// Each refusal is one line naming the keys.

#include <catch2/catch.hpp>

#include <any>
#include <set>
#include <string>
#include <vector>

#include "app/cli/builtin_registries.h"
#include "core/config/config_error.h"
#include "core/config/config_loader.h"
#include "core/config/config_node.h"
#include "core/config/experiment.h"
#include "engine/memory_contract.h"

namespace svqa {
namespace {

// Entry `name`'s required options, each set to "m" (an expert's model folder, whose existence is
// svqa validate's path check, not parsing's), as YAML flow-map entries.
std::string required_options(const RegistryBase& registry, const std::string& name) {
  std::string yaml;
  for (const auto& f : registry.find_info(name)->options->fields())
    if (f.required) yaml += (yaml.empty() ? "" : ", ") + f.name + ": m";
  return yaml;
}

// Entry `name`'s options: the required ones as above, every other at its default.
std::any defaults(const RegistryBase& registry, const std::string& name, const std::string& section) {
  const ConfigNode given = parse_yaml_text("{" + required_options(registry, name) + "}", "options");
  ErrorList errors_seen;
  const std::any options = registry.find_info(name)->options->parse_any(&given, section + ".options", errors_seen);
  REQUIRE(errors_seen.empty());
  return options;
}

std::any declared(const RegistryBase& registry, const std::string& name, const std::string& section) {
  const auto* info = registry.find_info(name);
  REQUIRE(info->contract);
  return info->contract(defaults(registry, name, section));
}

bool fits(const EncoderProvides& p, const RetrievalNeeds& n) {
  if (n.representatives != Representatives::None && n.representatives != p.representatives) return false;
  for (const auto g : n.all_of)
    if (!p.granularities.count(g)) return false;
  if (n.any_of.empty()) return true;
  for (const auto g : n.any_of)
    if (p.granularities.count(g)) return true;
  return false;
}

// The keys each expected refusal names, one set per line.
std::vector<std::set<std::string>> expected_refusals(const std::string& encoder, const EncoderProvides& p,
                                                     const std::string& retrieval, const RetrievalNeeds& n,
                                                     bool snapshots, bool codec) {
  std::vector<std::set<std::string>> out;
  if (!fits(p, n)) out.push_back({"retrieval.type", retrieval, encoder});
  if (snapshots && p.traits.memory != MemoryWrites::Appends) out.push_back({"memory.cache", "encoding.type", encoder});
  if (codec && p.traits.memory == MemoryWrites::AtQuestion) out.push_back({"stream.kv_codec", "encoding.type", encoder});
  if (snapshots && codec) out.push_back({"memory.cache", "stream.kv_codec"});
  return out;
}

bool names_all(const std::string& line, const std::set<std::string>& keys) {
  for (const auto& k : keys)
    if (line.find(k) == std::string::npos) return false;
  return true;
}

std::vector<std::string> validation_errors(const std::string& yaml, const Registries& registries) {
  try {
    validate_experiment(parse_yaml_text(yaml, "exp.yaml"), "exp.yaml", registries.sections());
  } catch (const ConfigError& e) {
    return e.lines();
  }
  return {};
}

}  // namespace

TEST_CASE("validate accepts exactly the encoder/retrieval/snapshot/codec combinations the declared traits allow",
          "[traits][validation]") {
  const Registries registries = builtin_registries();
  int64_t accepted = 0, refused = 0;
  for (const auto* e : registries.encoding.infos()) {
    const auto provides = std::any_cast<EncoderProvides>(declared(registries.encoding, e->name, "encoding"));
    for (const auto* r : registries.retrieval.infos()) {
      const auto needs = std::any_cast<RetrievalNeeds>(declared(registries.retrieval, r->name, "retrieval"));
      const auto required = required_options(registries.retrieval, r->name);
      for (const bool snapshots : {false, true})
        for (const bool codec : {false, true}) {
          const std::string yaml = "encoding: {type: " + e->name + "}\nretrieval: {type: " + r->name + ", options: {" +
                                   required + "}}\nstream: {kv_codec: " + (codec ? "int4" : "identity") + "}\n" +
                                   (snapshots ? "memory: {cache: snapshots}\n" : "");
          const auto want = expected_refusals(e->name, provides, r->name, needs, snapshots, codec);
          const auto got = validation_errors(yaml, registries);
          INFO(yaml);
          REQUIRE(got.size() == want.size());
          // Each expected refusal is a line of its own naming all its keys.
          std::set<size_t> matched;
          for (const auto& keys : want) {
            INFO(*keys.begin());
            bool found = false;
            for (size_t i = 0; i < got.size() && !found; ++i)
              if (!matched.count(i) && names_all(got[i], keys)) found = matched.insert(i).second;
            CHECK(found);
          }
          for (const auto& line : got) CHECK(line.find('\n') == std::string::npos);
          (want.empty() ? accepted : refused) += 1;
        }
    }
  }
  // Both answers occur: the matrix is not all one way.
  CHECK(accepted > 0);
  CHECK(refused > 0);
}

}  // namespace svqa
