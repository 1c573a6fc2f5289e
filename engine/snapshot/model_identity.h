#pragma once
// Which models a run's answers came from: every value of the resolved config that names an export
// directory (one holding manifest.json: a backbone from python -m models.export, an image-text
// expert from python -m models.export.image_text), with the size and checksum64 of each file in it.
// The run folder records them and compares them on resume, as it does the config: an export
// replaced at the same path would otherwise answer the rest of the questions with another model.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config/config_node.h"

namespace svqa {

// {"backbone.options.export": {"path": "exports/x", "files": {"manifest.json": {"bytes": 812,
// "checksum": "<16 hex>"}, ...}}, ...}; throws std::runtime_error naming an unreadable file.
nlohmann::json model_identities(const ConfigNode& resolved);

// The first difference between recorded and current identities ("backbone.options.export
// (exports/x: text.pt changed)"), or nothing when they agree.
std::optional<std::string> first_model_difference(const nlohmann::json& recorded, const nlohmann::json& now);

}  // namespace svqa
