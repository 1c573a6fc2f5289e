#include "models/loading/manifest.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/safe_paths.h"
#include "core/io/json_text.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ManifestReader {
 public:
  explicit ManifestReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw std::runtime_error(file_ + ": " + key + ": " + what);
  }
  const json& at(const json& j, const std::string& key, const std::string& path) const {
    if (!j.is_object() || !j.contains(key)) fail(path + key, "missing");
    return j.at(key);
  }
  template <typename T>
  T get(const json& j, const std::string& key, const std::string& path) const {
    const json& v = at(j, key, path);
    try {
      return v.get<T>();
    } catch (const json::exception&) {
      fail(path + key, "expected " + expected<T>() + ", got " + v.dump());
    }
  }
  template <typename T>
  T get_or(const json& j, const std::string& key, const std::string& path, T fallback) const {
    return j.contains(key) ? get<T>(j, key, path) : fallback;
  }

 private:
  template <typename T>
  static std::string expected() {
    if constexpr (std::is_same_v<T, std::string>) return "a string";
    else if constexpr (std::is_same_v<T, bool>) return "true or false";
    else if constexpr (std::is_integral_v<T>) return "an integer";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else return "a list";
  }
  std::string file_;
};

}  // namespace

std::string Manifest::path(const std::string& rel, const std::string& key) const {
  if (!stays_inside(rel))
    throw std::runtime_error(dir + "/manifest.json: " + key + ": \"" + rel + "\" is not a path inside the export folder");
  const fs::path p = fs::path(dir) / rel;
  if (!fs::exists(p))
    throw std::runtime_error(p.string() + ": missing (listed in " + dir + "/manifest.json as " + key +
                             "; re-run the export)");
  return p.string();
}

namespace {

// format, format_version, architecture, source and dtype: what kind of export this is.
void read_export_kind(const ManifestReader& r, const json& j, Manifest& m) {
  if (r.get<std::string>(j, "format", "") != "svqa-export") r.fail("format", "expected \"svqa-export\"");
  const int version = r.get<int>(j, "format_version", "");
  if (version != kExportFormatVersion)
    r.fail("format_version", "this svqa reads version " + std::to_string(kExportFormatVersion) + ", the export is version " +
                                 std::to_string(version) + " (re-export with this checkout's models/export)");
  m.architecture_name = r.get<std::string>(j, "architecture", "");
  if (m.architecture_name == "llava_onevision") m.architecture = Architecture::LlavaOnevision;
  else if (m.architecture_name == "qwen2_5_vl") m.architecture = Architecture::Qwen2_5_VL;
  else if (m.architecture_name == "qwen3_vl") m.architecture = Architecture::Qwen3_VL;
  else r.fail("architecture", "unknown '" + m.architecture_name + "' (expected llava_onevision, qwen2_5_vl or qwen3_vl)");
  m.source = r.get_or<std::string>(j, "source", "", "");
  m.dtype = r.get<std::string>(j, "dtype", "");
  if (m.dtype != "float32" && m.dtype != "float16" && m.dtype != "bfloat16")
    r.fail("dtype", "expected float32, float16 or bfloat16, got '" + m.dtype + "'");
}

TextSpec read_text_spec(const ManifestReader& r, const json& t) {
  TextSpec text;
  text.hidden_size = r.get<int64_t>(t, "hidden_size", "text.");
  text.num_layers = r.get<int64_t>(t, "num_layers", "text.");
  text.num_heads = r.get<int64_t>(t, "num_heads", "text.");
  text.num_kv_heads = r.get<int64_t>(t, "num_kv_heads", "text.");
  text.head_dim = r.get<int64_t>(t, "head_dim", "text.");
  text.vocab_size = r.get<int64_t>(t, "vocab_size", "text.");
  text.rope_theta = r.get<double>(t, "rope_theta", "text.");
  text.rms_norm_eps = r.get<double>(t, "rms_norm_eps", "text.");
  text.mrope_section = r.get_or<std::vector<int64_t>>(t, "mrope_section", "text.", {});
  text.mrope_interleaved = r.get_or<bool>(t, "mrope_interleaved", "text.", false);
  if (text.num_heads <= 0 || text.num_kv_heads <= 0 || text.num_heads % text.num_kv_heads)
    r.fail("text.num_kv_heads", "must divide num_heads");
  return text;
}

// The vision tower's settings, which depend on the architecture (and check against the text's).
VisionSpec read_vision_spec(const ManifestReader& r, const json& v, const Manifest& m) {
  VisionSpec vision;
  if (m.architecture == Architecture::LlavaOnevision) {
    vision.tokens_per_frame = r.get<int64_t>(v, "tokens_per_frame", "vision.");
    vision.video_newline = r.get<bool>(v, "video_newline", "vision.");
    vision.layers = r.get_or<int64_t>(v, "layers", "vision.", 0);
    vision.num_heads = r.get_or<int64_t>(v, "num_heads", "vision.", 0);
    if (vision.layers < 0 || (vision.layers > 0 && vision.num_heads <= 0))
      r.fail("vision.layers", "must be 0 (no layer-by-layer tower) or positive, with vision.num_heads positive");
    return vision;
  }
  const bool qwen3 = m.architecture == Architecture::Qwen3_VL;
  vision.patch_size = r.get<int64_t>(v, "patch_size", "vision.");
  vision.spatial_merge_size = r.get<int64_t>(v, "spatial_merge_size", "vision.");
  vision.temporal_patch_size = r.get<int64_t>(v, "temporal_patch_size", "vision.");
  vision.num_heads = r.get<int64_t>(v, "num_heads", "vision.");
  vision.head_dim = r.get<int64_t>(v, "head_dim", "vision.");
  vision.rope_theta = r.get<double>(v, "rope_theta", "vision.");
  if (qwen3) {
    vision.num_position_embeddings = r.get<int64_t>(v, "num_position_embeddings", "vision.");
    vision.deepstack_layers = r.get<int64_t>(v, "deepstack_layers", "vision.");
    if (vision.deepstack_layers < 0 || vision.deepstack_layers > m.text.num_layers)
      r.fail("vision.deepstack_layers", "must be in [0, text.num_layers]");
    if (!m.text.mrope_interleaved) r.fail("text.mrope_interleaved", "must be true (Qwen3-VL interleaves mRoPE)");
  } else {
    vision.window_size = r.get<int64_t>(v, "window_size", "vision.");
    vision.tokens_per_second = r.get<double>(v, "tokens_per_second", "vision.");
  }
  if (m.text.mrope_section.empty()) r.fail("text.mrope_section", "missing (" + m.architecture_name + " uses mRoPE)");
  return vision;
}

// chat.video_prompt and chat.frame_prompt, each with the placeholders the backbone fills.
void read_chat(const ManifestReader& r, const json& chat, Manifest& m) {
  m.video_prompt = r.get<std::string>(chat, "video_prompt", "chat.");
  const size_t video = m.video_prompt.find("{video}"), question = m.video_prompt.find("{question}");
  if (video == std::string::npos || question == std::string::npos || question < video)
    r.fail("chat.video_prompt", "must contain {video} and, after it, {question}");

  m.frame_prompt = r.get_or<std::string>(chat, "frame_prompt", "chat.", "");
  if (m.architecture == Architecture::Qwen3_VL && (m.frame_prompt.find("{seconds}") == std::string::npos ||
                                                   m.frame_prompt.find("{frame}") == std::string::npos))
    r.fail("chat.frame_prompt", "must contain {seconds} and {frame} (Qwen3-VL writes each temporal patch's time)");
}

// files.*: each a path inside the export folder that exists, one layer file per text layer.
void read_files(const ManifestReader& r, const json& f, Manifest& m) {
  m.tokenizer_file = m.path(r.get<std::string>(f, "tokenizer", "files."), "files.tokenizer");
  m.text_file = m.path(r.get<std::string>(f, "text", "files."), "files.text");
  m.vision_file = m.path(r.get<std::string>(f, "vision", "files."), "files.vision");
  const auto layers = r.get<std::vector<std::string>>(f, "layers", "files.");
  if (static_cast<int64_t>(layers.size()) != m.text.num_layers)
    r.fail("files.layers", "lists " + std::to_string(layers.size()) + " files for " +
                               std::to_string(m.text.num_layers) + " layers");
  for (size_t i = 0; i < layers.size(); ++i)
    m.layer_files.push_back(m.path(layers[i], "files.layers[" + std::to_string(i) + "]"));
}

}  // namespace

Manifest load_manifest(const std::string& dir) {
  const std::string file = (fs::path(dir) / "manifest.json").string();
  if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": export directory not found");
  if (!fs::exists(file))
    throw std::runtime_error(file + ": not found (expected an svqa export; make one with `python -m models.export`)");
  const json j = read_json_file(file);
  const ManifestReader r(file);
  Manifest m;
  m.dir = fs::absolute(dir).lexically_normal().string();
  read_export_kind(r, j, m);
  m.text = read_text_spec(r, r.at(j, "text", ""));
  m.vision = read_vision_spec(r, r.at(j, "vision", ""), m);
  m.image = image_spec_from_json(r.at(j, "image", ""), file);
  m.eos_ids = r.get<std::vector<int64_t>>(r.at(j, "tokens", ""), "eos", "tokens.");
  read_chat(r, r.at(j, "chat", ""), m);
  read_files(r, r.at(j, "files", ""), m);
  return m;
}

}  // namespace svqa
