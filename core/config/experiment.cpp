#include "core/config/experiment.h"

#include <algorithm>
#include <filesystem>

#include "core/config/config_loader.h"
#include "core/config/schema_defaults.h"
#include "core/config/slurm_options.h"

namespace svqa {

const ComponentChoice* ExperimentConfig::component(const std::string& section) const {
  auto it = components.find(section);
  return it == components.end() ? nullptr : &it->second;
}

static void validate_component(const ConfigNode& node, const std::string& section, const RegistryBase& registry,
                               ExperimentConfig& out, ErrorList& errors) {
  if (!node.is_map()) {
    errors.add(node.loc, section, "expected a section with 'type' and 'options', got " + node.describe());
    return;
  }
  check_known_keys(node, section, {"type", "options"}, errors);
  const ConfigNode* type = node.find("type");
  if (!type) {
    errors.add(node.loc, section + ".type", "missing required key (one of: " + [&] {
      std::string l;
      for (const auto& n : registry.names()) l += (l.empty() ? "" : ", ") + n;
      return l.empty() ? std::string("none registered") : l;
    }() + ")");
    return;
  }
  if (!type->is_scalar()) {
    errors.add(type->loc, section + ".type", "expected a " + registry.kind() + " name, got " + type->describe());
    return;
  }
  const RegistryEntryInfo* entry = registry.find_info(type->scalar);
  if (!entry) {
    errors.add(type->loc, section + ".type", registry.unknown_name_message(type->scalar));
    return;
  }
  const ConfigNode* options = node.find("options");
  std::any parsed = entry->options->parse_any(options, section + ".options", errors);
  out.components[section] = {type->scalar, std::move(parsed)};
}

// Each registry's rules with another section's choice (an encoder and the retrieval reading its blocks),
// reported at this section's type.
static void check_section_rules(const ConfigNode& root, const RegistrySections& registries, const ExperimentConfig& out,
                                ErrorList& errors) {
  for (const auto& [section, registry] : registries)
    for (const auto& rule : registry->rules()) {
      const ComponentChoice* mine = out.component(section);
      const ComponentChoice* theirs = out.component(rule.other_section);
      const auto other = std::find_if(registries.begin(), registries.end(),
                                      [&](const auto& s) { return s.first == rule.other_section; });
      if (!mine || !theirs || other == registries.end()) continue;
      const RegistryEntryInfo* a = registry->find_info(mine->type);
      const RegistryEntryInfo* b = other->second->find_info(theirs->type);
      if (!a || !b || !a->contract || !b->contract) continue;
      const std::string problem = rule.problem(mine->type, a->contract(mine->options), theirs->type, b->contract(theirs->options));
      if (problem.empty()) continue;
      const ConfigNode* node = root.find(section);
      const ConfigNode* type = node ? node->find("type") : nullptr;
      errors.add(type ? type->loc : root.loc, section + ".type", problem);
    }
}

// Each registry's rules with the header (the encoder and stream.context_window_s), reported at the header's key.
static void check_header_rules(const ConfigNode& root, const RegistrySections& registries, const ExperimentConfig& out,
                               ErrorList& errors) {
  for (const auto& [section, registry] : registries)
    for (const auto& rule : registry->header_rules()) {
      const ComponentChoice* mine = out.component(section);
      const RegistryEntryInfo* info = mine ? registry->find_info(mine->type) : nullptr;
      if (!info || !info->contract) continue;
      const std::string problem = rule.problem(mine->type, info->contract(mine->options), out.header);
      if (problem.empty()) continue;
      const ConfigNode* node = &root;  // the key's node, or as far down its path as the file goes
      for (size_t from = 0; from <= rule.key.size();) {
        const size_t dot = std::min(rule.key.find('.', from), rule.key.size());
        const ConfigNode* child = node->find(std::string_view(rule.key).substr(from, dot - from));
        if (!child) break;
        node = child, from = dot + 1;
      }
      errors.add(node->loc, rule.key, problem);
    }
}

std::vector<SectionPair> section_pairs(const RegistrySections& registries) {
  std::vector<SectionPair> out;
  const auto defaults = [](const RegistryEntryInfo* e, const std::string& section) {
    ErrorList ignored;  // required options missing: the contract reads the others' defaults
    return e->contract(e->options->parse_any(nullptr, section + ".options", ignored));
  };
  for (const auto& [section, registry] : registries)
    for (const auto& rule : registry->rules())
      for (const auto& [other_section, other] : registries) {
        if (other_section != rule.other_section) continue;
        for (const auto* a : registry->infos())
          for (const auto* b : other->infos())
            if (a->contract && b->contract)
              out.push_back({section, a->name, other_section, b->name,
                             rule.problem(a->name, defaults(a, section), b->name, defaults(b, other_section))});
      }
  return out;
}

// The validated tree with every default: the header's fields, each chosen component's options, then the
// sections no schema completes (grid, slurm) as set. `expected:` is completed only where it is set.
static ConfigNode complete_experiment(const ConfigNode& root, const ExperimentConfig& cfg,
                                      const RegistrySections& registries) {
  const auto header_fields = Schema<ExperimentHeader>().fields();
  ConfigNode header = ConfigNode::map(root.loc);  // the header's keys; the sections come after, in their order
  for (const auto& f : header_fields)
    if (const ConfigEntry* e = root.find_entry(f.name)) header.entries.push_back(*e);
  ConfigNode out = with_defaults(&header, header_fields);
  ConfigNode* name = out.find("name");
  if (name && !root.find("name"))  // the file's stem when the file sets none
    *name = parse_yaml_text(ValueReader<std::string>::yaml(cfg.header.name), "name");
  for (const auto& [section, registry] : registries) {
    const ComponentChoice* choice = cfg.component(section);
    if (!choice) continue;
    const ConfigEntry* given = root.find_entry(section);
    ConfigNode node = ConfigNode::map(given->value.loc);
    node.entries.push_back(*given->value.find_entry("type"));
    const RegistryEntryInfo* entry = registry->find_info(choice->type);
    node.entries.push_back(
        {"options", given->key_loc, with_defaults(given->value.find("options"), entry->options->fields())});
    out.entries.push_back({section, given->key_loc, std::move(node)});
  }
  for (const auto& e : root.entries)
    if (!out.find(e.key)) {
      out.entries.push_back(e);
      if (e.key == "expected") out.entries.back().value = with_defaults(&e.value, Schema<ExpectedResult>().fields());
    }
  return out;
}

ExperimentConfig validate_experiment(ConfigNode root, const std::string& origin, const RegistrySections& registries) {
  ExperimentConfig out;
  ErrorList errors;
  const Schema<ExperimentHeader> header_schema;

  std::vector<std::string> header_keys;
  for (const auto& f : header_schema.fields()) header_keys.push_back(f.name);
  std::vector<std::string> known = header_keys;
  for (const auto& [section, _] : registries) known.push_back(section);
  known.push_back("grid");  // checked by expand_grid (core/grid.h)
  known.push_back("slurm");  // svqa submit's, not part of a run (core/config/slurm_options.h)
  known.push_back("expected");  // the paper's figure, for reports (core/config/expected_result.h)
  check_known_keys(root, "", known, errors);
  Schema<SlurmOptions>().parse(root.find("slurm"), "slurm", errors);
  out.expected = expected_result(root, errors);

  // The header schema sees only its own keys; the top-level check above reported the rest.
  ConfigNode header = ConfigNode::map(root.loc);
  for (const auto& e : root.entries)
    if (std::find(header_keys.begin(), header_keys.end(), e.key) != header_keys.end()) header.entries.push_back(e);
  out.header = header_schema.parse(&header, "", errors);
  if (out.header.name.empty()) out.header.name = std::filesystem::path(origin).stem().string();

  const size_t before_components = errors.size();
  for (const auto& [section, registry] : registries)
    if (const ConfigNode* node = root.find(section)) validate_component(*node, section, *registry, out, errors);
  if (errors.size() == before_components) {  // options parsed: contracts can be read; each problem its own line
    check_section_rules(root, registries, out, errors);
    check_header_rules(root, registries, out, errors);
  }

  errors.throw_if_any();
  out.complete = complete_experiment(root, out, registries);
  out.resolved = std::move(root);
  return out;
}

ExperimentConfig resolve_experiment(const std::string& path, const std::vector<std::string>& overrides,
                                    const RegistrySections& registries) {
  ConfigNode root = load_config(path);
  apply_overrides(root, overrides);
  return validate_experiment(std::move(root), path, registries);
}

std::vector<ExperimentConfig> validate_grid_runs(const std::vector<GridRun>& runs, const std::string& origin,
                                                 const RegistrySections& registries) {
  std::vector<ExperimentConfig> configs;
  std::vector<std::pair<std::string, std::vector<std::string>>> problems;  // line → runs, in first-seen order
  for (const auto& run : runs) {
    try {
      configs.push_back(validate_experiment(run.config, origin, registries));
    } catch (const ConfigError& e) {
      for (const auto& line : e.lines()) {
        auto it = std::find_if(problems.begin(), problems.end(), [&](const auto& p) { return p.first == line; });
        if (it == problems.end()) it = problems.insert(problems.end(), {line, {}});
        it->second.push_back(run.name);
      }
    }
  }
  if (problems.empty()) return configs;
  std::vector<std::string> lines;
  for (const auto& [line, names] : problems) {
    std::string which = names.size() == 1 ? " (run " : " (runs ";
    for (size_t i = 0; i < names.size() && i < 3; ++i) which += (i ? ", " : "") + names[i];
    if (names.size() > 3) which += " and " + std::to_string(names.size() - 3) + " more";
    lines.push_back(line + which + ")");
  }
  throw ConfigError(lines);
}

}  // namespace svqa
