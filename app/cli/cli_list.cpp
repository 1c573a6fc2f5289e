// `svqa list [NAME] [--json]`: every experiment key and registered component with its options, and
// which components of two sections fit together.

// As in every file of the command line (one definition of cxxopts' inline code): see cli.cpp.
#define CXXOPTS_VECTOR_DELIMITER '\x1f'
#include <cxxopts.hpp>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "app/cli/cli_commands.h"
#include "core/config/config_error.h"
#include "core/config/experiment.h"
#include "core/config/experiment_keys.h"
#include "core/config/schema.h"
#include "engine/registries.h"

#ifndef SVQA_VERSION
#define SVQA_VERSION "unknown"
#endif

namespace svqa {
namespace {

nlohmann::json fields_json(const std::vector<FieldInfo>& fields) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : fields) {
    nlohmann::json j = {{"name", f.name}, {"type", f.type}, {"doc", f.doc}, {"required", f.required}};
    if (!f.required && f.fields.empty()) j["default"] = f.default_yaml;
    if (f.min) j["min"] = *f.min;
    if (f.max) j["max"] = *f.max;
    if (!f.choices.empty()) j["choices"] = f.choices;
    if (!f.pattern_doc.empty()) j["format"] = f.pattern_doc;
    if (f.max_bytes) j["max_bytes"] = *f.max_bytes;
    if (f.max_items) j["max_items"] = *f.max_items;
    if (!f.fields.empty()) j["fields"] = fields_json(f.fields);
    out.push_back(std::move(j));
  }
  return out;
}

void print_fields(const std::vector<FieldInfo>& fields, const std::string& indent) {
  for (const auto& f : fields) {
    std::string constraint;
    if (!f.choices.empty()) {
      for (const auto& c : f.choices) constraint += (constraint.empty() ? "" : "|") + c;
    } else if (!f.pattern_doc.empty()) {
      constraint = f.pattern_doc;
    } else if (f.min || f.max) {
      const auto bound = [&](double v) { return f.type.find("integer") != std::string::npos ? format_bound(v) : format_number(v); };
      constraint = (f.min ? bound(*f.min) : std::string("-inf")) + ".." + (f.max ? bound(*f.max) : std::string("inf"));
    }
    if (f.max_items) constraint += (constraint.empty() ? "" : ", ") + std::string("≤ ") + std::to_string(*f.max_items) + " items";
    if (f.max_bytes && f.choices.empty() && f.pattern_doc.empty())
      constraint += (constraint.empty() ? "" : ", ") + std::string("≤ ") + std::to_string(*f.max_bytes) + " bytes";
    std::string value = f.required ? "required" : f.fields.empty() ? "= " + f.default_yaml : "";
    std::cout << indent << f.name << ": " << f.type << " " << value
              << (constraint.empty() ? "" : " [" + constraint + "]") << "  # " << f.doc << "\n";
    if (!f.fields.empty()) print_fields(f.fields, indent + "  ");
  }
}

// "retrieval internal: fits encoding rekv_sliding_window, ...; not mukv_multigrain (why)" per entry.
void print_pairs(const std::vector<SectionPair>& pairs) {
  if (pairs.empty()) return;
  std::cout << "\nwhich pairs fit (default options; `svqa validate` checks an experiment's own):\n";
  for (size_t i = 0; i < pairs.size();) {
    const auto& first = pairs[i];
    std::string fits, not_fits;
    for (; i < pairs.size() && pairs[i].section == first.section && pairs[i].type == first.type; ++i) {
      std::string& list = pairs[i].problem.empty() ? fits : not_fits;
      list += (list.empty() ? "" : ", ") + pairs[i].other_type;
    }
    std::cout << "  " << first.section << " " << first.type << ": fits " << first.other_section << " "
              << (fits.empty() ? "(none)" : fits) << (not_fits.empty() ? "" : "; not " + not_fits) << "\n";
  }
}

// What `svqa list NAME` shows: an experiment key, a section, or a component of any section.
struct ListFilter {
  std::string name;  // "" shows everything
  bool key(const FieldInfo& f) const { return name.empty() || f.name == name; }
  bool section(const std::string& s) const { return name.empty() || s == name; }
  bool entry(const std::string& s, const std::string& e) const { return section(s) || e == name; }
  bool pair(const SectionPair& p) const { return entry(p.section, p.type) || entry(p.other_section, p.other_type); }
};

// Refuses a NAME that is no experiment key, section nor component, suggesting the closest.
void require_listed(const ListFilter& filter, const std::vector<FieldInfo>& keys, const Registries& registries) {
  if (filter.name.empty()) return;
  std::vector<std::string> names;
  for (const auto& f : keys) names.push_back(f.name);
  for (const auto& [section, registry] : registries.sections()) {
    names.push_back(section);
    for (const auto* e : registry->infos()) names.push_back(e->name);
  }
  if (std::find(names.begin(), names.end(), filter.name) == names.end())
    throw UsageError("'" + filter.name + "' is no experiment key, section or component" + did_you_mean(filter.name, names));
}

void list_json(const ListFilter& filter, const std::vector<FieldInfo>& keys, const Registries& registries) {
  std::vector<FieldInfo> shown;
  for (const auto& f : keys)
    if (filter.key(f)) shown.push_back(f);
  nlohmann::json j = {{"version", SVQA_VERSION}, {"experiment", fields_json(shown)}};
  j["registries"] = nlohmann::json::object();
  for (const auto& [section, registry] : registries.sections()) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto* e : registry->infos())
      if (filter.entry(section, e->name))
        entries.push_back({{"name", e->name},
                           {"description", e->description},
                           {"registered_at", e->registered_at.file + ":" + std::to_string(e->registered_at.line)},
                           {"options", fields_json(e->options->fields())}});
    if (filter.name.empty() || !entries.empty())
      j["registries"][section] = {{"kind", registry->kind()}, {"entries", std::move(entries)}};
  }
  j["pairs"] = nlohmann::json::array();
  for (const auto& p : section_pairs(registries.sections()))
    if (filter.pair(p))
      j["pairs"].push_back({{p.section, p.type}, {p.other_section, p.other_type}, {"fits", p.problem.empty()},
                            {"problem", p.problem}});
  std::cout << j.dump(2) << "\n";
}

void list_text(const ListFilter& filter, const std::vector<FieldInfo>& keys, const Registries& registries) {
  std::vector<FieldInfo> shown;
  for (const auto& f : keys)
    if (filter.key(f)) shown.push_back(f);
  if (!shown.empty()) {
    std::cout << "experiment keys:\n";
    print_fields(shown, "  ");
  }
  bool first = shown.empty();
  for (const auto& [section, registry] : registries.sections()) {
    std::vector<const RegistryEntryInfo*> entries;
    for (const auto* e : registry->infos())
      if (filter.entry(section, e->name)) entries.push_back(e);
    if (!filter.section(section) && entries.empty()) continue;
    const std::string& kind = registry->kind();  // "encoding strategy" → "encoding strategies"
    const std::string kinds = kind.back() == 'y' ? kind.substr(0, kind.size() - 1) + "ies" : kind + "s";
    std::cout << (first ? "" : "\n") << section << " (" << kinds << ", `" << section
              << ": {type: NAME, options: {...}}`):\n";
    first = false;
    if (entries.empty()) std::cout << "  (none registered)\n";
    for (const auto* e : entries) {
      std::cout << "  " << e->name << "  # " << e->description << "\n";
      print_fields(e->options->fields(), "    ");
    }
  }
  std::vector<SectionPair> pairs;
  for (const auto& p : section_pairs(registries.sections()))
    if (filter.pair(p)) pairs.push_back(p);
  print_pairs(pairs);
}

}  // namespace

int cmd_list(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa list", "Every experiment key and registered component with its options.");
  options.add_options()("name", "show only this experiment key, section or component (e.g. stream, retrieval, hermes)",
                        cxxopts::value<std::string>())("json", "machine-readable output")("h,help", "show this help");
  options.parse_positional({"name"});
  options.positional_help("[NAME]");
  auto result = options.parse(argc, argv);
  if (result.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!result.unmatched().empty()) throw UsageError("unexpected argument '" + result.unmatched()[0] + "'");
  const ListFilter filter{result.count("name") ? result["name"].as<std::string>() : ""};
  const auto keys = experiment_key_fields();
  require_listed(filter, keys, registries);
  if (result.count("json")) list_json(filter, keys, registries);
  else list_text(filter, keys, registries);
  return 0;
}

}  // namespace svqa
