#pragma once
// Paths built from what a user or a file wrote (experiment names, grid values, stream ids,
// manifest entries) must not leave the folder they are meant for.

#include <string>

namespace svqa {

// `text` as one path component: '/', '\' and control characters become '_', and "." or ".."
// (alone) become "_": whatever it held, it names an entry inside its parent folder.
std::string safe_path_component(const std::string& text);

// Whether `relative` (as written in a manifest) names something inside its folder: not absolute,
// not empty, and no ".." that climbs above the folder once normalised. Checked lexically: a
// symbolic link inside the folder is followed like any file.
bool stays_inside(const std::string& relative);

}  // namespace svqa
