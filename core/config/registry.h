#pragma once
// Named, typed factories: the YAML `type:` of a component picks an entry here.
//
//   Registry<RetrievalStrategy> retrieval("retrieval strategy");
//   retrieval.add<InternalOptions>("internal", "per-layer query/key similarity (ReKV)",
//       [](const InternalOptions& o) { return std::make_unique<InternalRetrieval>(o); }, SVQA_HERE);
//
// Registration is explicit, from one register_builtin_*() list per folder, never from
// static initialisers (a linker silently drops those from static libraries).

#include <algorithm>
#include <any>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/config/schema.h"

#define SVQA_HERE ::svqa::SourceLoc{__FILE__, __LINE__, 0}

namespace svqa {

// A programming error in registration (not user input): a name registered twice.
class RegistryError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// What every registry exposes without knowing its product type: for validation and `svqa list`.
struct RegistryEntryInfo {
  std::string name;
  std::string description;
  std::shared_ptr<const OptionsSchema> options;
  SourceLoc registered_at;
  // What this entry, with given options, provides to or needs from the other sections (a typed
  // struct the layer above defines, e.g. engine/memory_contract.h's); empty: nothing declared.
  std::function<std::any(const std::any& options)> contract;
  // Config leaves outside its own section that what its product computes depends on
  // ("runtime.seed"), declared with RegistryBase::declare_reads; empty: none.
  std::vector<std::string> reads;
};

// A rule between two sections' choices, checked at validation once both parsed: from the contract
// of this section's choice and the other section's, the problem (naming both), or "".
struct SectionRule {
  std::string other_section;
  std::function<std::string(const std::string& type, const std::any& contract, const std::string& other_type,
                            const std::any& other_contract)>
      problem;
};

struct ExperimentHeader;
// A rule between a section's choice and the experiment's own keys (stream.*, ...), checked at
// validation: from the choice's contract and the header, the problem (naming both keys), or "".
struct HeaderRule {
  std::string key;  // the header key the problem is reported at, e.g. "stream.context_window_s"
  std::function<std::string(const std::string& type, const std::any& contract, const ExperimentHeader& header)> problem;
};

class RegistryBase;
// The registries an experiment is validated against: (YAML section, registry) in file order.
using RegistrySections = std::vector<std::pair<std::string, const RegistryBase*>>;

class RegistryBase {
 public:
  explicit RegistryBase(std::string kind) : kind_(std::move(kind)) {}
  virtual ~RegistryBase() = default;
  const std::string& kind() const { return kind_; }  // "retrieval strategy"
  const RegistryEntryInfo* find_info(const std::string& name) const;
  std::vector<const RegistryEntryInfo*> infos() const;  // sorted by name
  std::vector<std::string> names() const;
  // "unknown retrieval strategy 'internl' (did you mean 'internal'?); known: external, internal";
  // for a retired name, "retrieval strategy 'uniform' was renamed 'bank_uniform': <why>".
  std::string unknown_name_message(const std::string& name) const;
  // A name no longer registered, refused with the one that replaced it and why (not an alias: a
  // config naming it would silently mean something else than its readers expect).
  void retire(std::string name, std::string replacement, std::string why);
  // Declares the config leaves outside its own section that entry `name`'s product reads (dotted
  // paths: "runtime.seed" for a strategy that draws random numbers). What depends on the entry's
  // results keys on them: the memory cache's snapshots (engine/declared_reads.h). Throws
  // RegistryError when `name` is not registered.
  void declare_reads(const std::string& name, std::vector<std::string> leaves);
  // Rules this section's choice must keep with another section's (experiment validation runs them).
  void add_rule(SectionRule rule) { rules_.push_back(std::move(rule)); }
  const std::vector<SectionRule>& rules() const { return rules_; }
  // Rules this section's choice must keep with the experiment's header keys.
  void add_header_rule(HeaderRule rule) { header_rules_.push_back(std::move(rule)); }
  const std::vector<HeaderRule>& header_rules() const { return header_rules_; }

 protected:
  void add_info(RegistryEntryInfo info);  // throws RegistryError on a duplicate name

 private:
  struct Retired {
    std::string name, replacement, why;
  };
  std::string kind_;
  std::vector<RegistryEntryInfo> infos_;
  std::vector<Retired> retired_;
  std::vector<SectionRule> rules_;
  std::vector<HeaderRule> header_rules_;
};

template <class Product, class... Args>
class Registry final : public RegistryBase {
 public:
  using RegistryBase::RegistryBase;

  template <class Options, class Factory>
  void add(const std::string& name, const std::string& description, Factory factory, SourceLoc where) {
    add<Options>(name, description, std::move(factory), where, std::function<std::any(const Options&)>());
  }

  // With a contract: `contract(options)` says what the entry provides or needs (a typed struct).
  template <class Options, class Factory, class Contract>
  void add(const std::string& name, const std::string& description, Factory factory, SourceLoc where,
           std::function<Contract(const Options&)> contract) {
    std::function<std::any(const std::any&)> erased;
    if (contract)
      erased = [c = std::move(contract)](const std::any& o) -> std::any { return c(std::any_cast<const Options&>(o)); };
    add_info({name, description, std::make_shared<Schema<Options>>(), where, std::move(erased), {}});
    factories_.push_back({name, [f = std::move(factory)](const std::any& options, Args... args) {
                            const auto& o = std::any_cast<const Options&>(options);
                            // A factory that does not need the registry's extra arguments (the runtime
                            // options, say) takes its options alone.
                            if constexpr (std::is_invocable_v<const Factory&, const Options&, Args...>)
                              return f(o, args...);
                            else
                              return ((void)args, ..., f(o));
                          }});
  }

  // `options` must come from this entry's schema (see ExperimentConfig).
  std::unique_ptr<Product> create(const std::string& name, const std::any& options, Args... args) const {
    for (const auto& f : factories_)
      if (f.name == name) return f.make(options, args...);
    throw std::invalid_argument(unknown_name_message(name));
  }

 private:
  struct FactoryEntry {
    std::string name;
    std::function<std::unique_ptr<Product>(const std::any&, Args...)> make;
  };
  std::vector<FactoryEntry> factories_;
};

}  // namespace svqa
