#include "models/image_text/image_text_manifest.h"

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

// Token ids, widths: far above any real model's (vocabularies ~250k, widths ~4k).
constexpr int64_t kMaxManifestInteger = int64_t{1} << 31;
// Tokens of one text (CLIP 77, SigLIP 64, PE-Core 32/72): each question allocates this many.
constexpr int64_t kMaxTextTokens = 8192;

// Typed access to manifest keys; every error names the file and the dotted key.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw std::runtime_error(file_ + ": " + key + ": " + what);
  }
  const json& at(const json& j, const std::string& key) const {
    const auto dot = key.rfind('.');
    const std::string leaf = dot == std::string::npos ? key : key.substr(dot + 1);
    if (!j.is_object() || !j.contains(leaf)) fail(key, "missing");
    return j.at(leaf);
  }
  std::string string(const json& j, const std::string& key) const {
    const json& v = at(j, key);
    if (!v.is_string()) fail(key, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }
  // Every integer bounded: a text length of 10^12 once became a std::bad_alloc per question.
  int64_t integer(const json& j, const std::string& key, int64_t min, int64_t max = kMaxManifestInteger) const {
    const json& v = at(j, key);
    if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max)
      fail(key, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + v.dump());
    return v.get<int64_t>();
  }
  bool boolean(const json& j, const std::string& key) const {
    const json& v = at(j, key);
    if (!v.is_boolean()) fail(key, "expected true or false, got " + v.dump());
    return v.get<bool>();
  }
  std::string file(const json& files, const std::string& key, const std::string& dir) const {
    const std::string rel = string(files, key);
    if (!stays_inside(rel)) fail(key, "\"" + rel + "\" is not a path inside the export folder");
    const fs::path p = fs::path(dir) / rel;
    if (!fs::exists(p))
      throw std::runtime_error(p.string() + ": missing (listed in " + file_ + " as " + key + "; re-run the export)");
    return p.string();
  }

 private:
  std::string file_;
};

std::vector<AddedTextToken> added_tokens(const Reader& r, const json& t) {
  std::vector<AddedTextToken> out;
  const json& added = r.at(t, "text.added_tokens");
  if (!added.is_array()) r.fail("text.added_tokens", "expected a list, got " + added.dump());
  for (size_t i = 0; i < added.size(); ++i) {
    const std::string key = "text.added_tokens[" + std::to_string(i) + "]";
    AddedTextToken a;
    a.content = r.string(added[i], key + ".content");
    if (a.content.empty()) r.fail(key + ".content", "expected a non-empty string");
    a.id = r.integer(added[i], key + ".id", 0);
    a.lstrip = r.boolean(added[i], key + ".lstrip");
    a.rstrip = r.boolean(added[i], key + ".rstrip");
    a.special = r.boolean(added[i], key + ".special");
    a.normalized = added[i].contains("normalized") && r.boolean(added[i], key + ".normalized");
    out.push_back(a);
  }
  return out;
}

ClipTextSettings clip_text_settings(const Reader& r, const json& t) {
  ClipTextSettings s;
  s.cleanup = r.string(t, "text.cleanup");
  if (s.cleanup != "hf" && s.cleanup != "open_clip") r.fail("text.cleanup", "expected \"hf\" or \"open_clip\"");
  s.context_length = r.integer(t, "text.context_length", 2, kMaxTextTokens);
  s.bos_id = r.integer(t, "text.bos_id", 0);
  s.eos_id = r.integer(t, "text.eos_id", 0);
  s.pad_id = r.integer(t, "text.pad_id", 0);
  s.added_tokens = added_tokens(r, t);
  return s;
}

SiglipTextSettings text_settings(const Reader& r, const json& t) {
  SiglipTextSettings s;
  s.max_length = r.integer(t, "text.max_length", 1, kMaxTextTokens);
  s.pad_id = r.integer(t, "text.pad_id", 0);
  s.eos_id = r.integer(t, "text.eos_id", 0);
  s.unk_piece = r.string(t, "text.unk_piece");
  s.lowercase = r.boolean(t, "text.lowercase");
  s.remove_punctuation = r.boolean(t, "text.remove_punctuation");
  s.added_tokens = added_tokens(r, t);
  return s;
}

}  // namespace

ImageTextManifest load_image_text_manifest(const std::string& dir) {
  const std::string file = (fs::path(dir) / "manifest.json").string();
  if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": image-text export directory not found");
  if (!fs::exists(file))
    throw std::runtime_error(file + ": not found (expected an svqa image-text export; make one with "
                                    "`python -m models.export.image_text`)");
  const json j = read_json_file(file);  // a FIFO or device is refused, not read
  const Reader r(file);
  if (r.string(j, "format") != "svqa-image-text")
    r.fail("format", "expected \"svqa-image-text\", got " + j.at("format").dump() +
                         (j.at("format") == "svqa-export" ? " (a Video-LLM export, not an image-text model)" : ""));
  const int64_t version = r.integer(j, "format_version", 0);
  if (version != kImageTextFormatVersion)
    r.fail("format_version", "this svqa reads version " + std::to_string(kImageTextFormatVersion) +
                                 ", the export is version " + std::to_string(version) +
                                 " (re-export with this checkout's models/export/image_text.py)");
  ImageTextManifest m;
  m.dir = dir;
  m.architecture = r.string(j, "architecture");
  if (m.architecture != "siglip" && m.architecture != "clip" && m.architecture != "pe_core")
    r.fail("architecture", "expected \"siglip\", \"clip\" or \"pe_core\", got \"" + m.architecture + "\"");
  m.source = j.value("source", "");
  m.dtype = r.string(j, "dtype");
  if (m.dtype != "float32" && m.dtype != "float16" && m.dtype != "bfloat16")
    r.fail("dtype", "expected float32, float16 or bfloat16, got \"" + m.dtype + "\"");
  m.embedding_dim = r.integer(j, "embedding_dim", 1);
  m.image = image_spec_from_json(r.at(j, "image"), file);
  if (m.image.resize == ImageSpec::Resize::QwenSmart || m.image.resize == ImageSpec::Resize::Qwen3Smart)
    r.fail("image.resize", "expected \"fixed\" or \"shortest_edge_crop\"");
  const json& text = r.at(j, "text");
  m.text_tokenizer = r.string(text, "text.tokenizer");
  const json& files = r.at(j, "files");
  m.image_file = r.file(files, "files.image", dir);
  m.text_file = r.file(files, "files.text", dir);
  if (m.text_tokenizer == "siglip") {
    m.text = text_settings(r, text);
    m.spiece_file = r.file(files, "files.spiece", dir);
  } else if (m.text_tokenizer == "clip") {
    m.clip_text = clip_text_settings(r, text);
    m.bpe_file = r.file(files, "files.bpe", dir);
  } else {
    r.fail("text.tokenizer", "expected \"siglip\" or \"clip\", got \"" + m.text_tokenizer + "\"");
  }
  return m;
}

}  // namespace svqa
