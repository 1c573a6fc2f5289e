#include "models/video/frame_source.h"

#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <utility>

#include "models/video/npy.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

std::runtime_error source_error(const std::string& path, const std::string& what) {
  return std::runtime_error(path + ": " + what);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string size_text(int64_t width, int64_t height) { return std::to_string(width) + "x" + std::to_string(height); }

// Frames of one size, appended one by one into a uint8 [capacity, H, W, 3] tensor sized from an
// estimate (a video's stated frame count) and grown when it was short: memory stays near one copy
// of the frames, where collecting them and stacking at the end would need two.
class FrameBuffer {
 public:
  FrameBuffer(int64_t height, int64_t width, int64_t expected)
      : frames_(at::empty({initial_capacity(height, width, expected), height, width, 3}, at::kByte)) {}

  // A BGR image converted straight into the next frame's memory.
  void push_bgr(const cv::Mat& bgr) {
    if (count_ == frames_.size(0)) {
      at::Tensor bigger = at::empty({count_ + count_ / 2 + 1, frames_.size(1), frames_.size(2), 3}, at::kByte);
      bigger.narrow(0, 0, count_).copy_(frames_.narrow(0, 0, count_));
      frames_ = bigger;
    }
    cv::Mat rgb(static_cast<int>(frames_.size(1)), static_cast<int>(frames_.size(2)), CV_8UC3,
                frames_[count_].data_ptr());
    cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
    ++count_;
  }
  int64_t height() const { return frames_.size(1); }
  int64_t width() const { return frames_.size(2); }
  int64_t count() const { return count_; }
  // A view when little capacity is unused, else a compact copy.
  at::Tensor take() {
    const at::Tensor used = frames_.narrow(0, 0, count_);
    return count_ * 4 >= frames_.size(0) * 3 ? used : used.clone();
  }

 private:
  // Stated frame counts can be wrong (0, or absurd for broken headers): trust them up to 2 GiB.
  static int64_t initial_capacity(int64_t height, int64_t width, int64_t expected) {
    const int64_t frame_bytes = std::max<int64_t>(height * width * 3, 1);
    return std::clamp<int64_t>(expected, 1, std::max<int64_t>(1, (int64_t{2} << 30) / frame_bytes));
  }

  at::Tensor frames_;
  int64_t count_ = 0;
};

// OpenCV and FFmpeg log decoder complaints to stderr; svqa reports its own one-line errors. Their
// own variables still turn the logs on: OPENCV_LOG_LEVEL, OPENCV_FFMPEG_LOGLEVEL (e.g. 24 = warnings).
void quiet_opencv() {
  static const bool once = [] {
    if (!std::getenv("OPENCV_LOG_LEVEL")) cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    // Read by OpenCV when it first opens a file with FFmpeg; -8 is AV_LOG_QUIET.
    ::setenv("OPENCV_FFMPEG_LOGLEVEL", "-8", /*overwrite=*/0);
    return true;
  }();
  (void)once;
}

// A source's sampled frames one at a time, as BGR images with their timestamps; every frame the
// size of the first.
class FrameDecoder {
 public:
  virtual ~FrameDecoder() = default;
  // The next frame, false at the end. Throws naming the source and frame.
  bool next(cv::Mat& bgr, double& time) {
    if (!decode(bgr, time)) return false;
    if (bgr.type() != CV_8UC3) throw error(bgr.size(), "is not 8-bit 3-channel (expected BGR from OpenCV)");
    if (!first_size_.empty() && bgr.size() != first_size_) throw error(bgr.size(), "");
    first_size_ = bgr.size();
    return true;
  }
  double fps = 0;          // rate of the frames it gives
  int64_t expected = 1;    // how many it will give, as far as the source says

 protected:
  virtual bool decode(cv::Mat& bgr, double& time) = 0;
  // The error for the current frame: `what` is wrong with it, or (empty) its size is not the first's.
  virtual std::runtime_error error(cv::Size got, const std::string& what) const = 0;
  cv::Size first_size_;
};

// Every step-th frame of a video from frame 0 (the reference code's rule), at index / avg_fps.
class VideoDecoder final : public FrameDecoder {
 public:
  VideoDecoder(const std::string& path, double target_fps, FrameStep step) : path_(path) {
    quiet_opencv();
    // FFmpeg only: other backends (GStreamer) print their own warnings and differ in frame rates.
    capture_.open(path, cv::CAP_FFMPEG);
    if (!capture_.isOpened()) throw source_error(path, "cannot open as a video (expected a file FFmpeg can decode)");
    avg_fps_ = capture_.get(cv::CAP_PROP_FPS);
    if (!std::isfinite(avg_fps_) || avg_fps_ <= 0)
      throw source_error(path, "the video states no frame rate (expected a positive average fps)");
    step_ = video_frame_step(avg_fps_, target_fps, step);
    fps = avg_fps_ / static_cast<double>(step_);
    expected = (static_cast<int64_t>(capture_.get(cv::CAP_PROP_FRAME_COUNT)) + step_ - 1) / step_;
  }

 private:
  bool decode(cv::Mat& bgr, double& time) override {
    for (;; ++index_) {
      // grab() decodes; only kept frames pay for retrieve()'s conversion to BGR.
      if (!capture_.grab()) return finish();
      if (index_ % step_ != 0) continue;
      if (!capture_.retrieve(bgr) || bgr.empty()) return finish();
      time = static_cast<double>(index_++) / avg_fps_;
      ++given_;
      return true;
    }
  }
  bool finish() const {
    if (!given_) throw source_error(path_, "no frame could be decoded (expected a video; is the file corrupt?)");
    return false;
  }
  std::runtime_error error(cv::Size got, const std::string& what) const override {
    const std::string frame = "frame " + std::to_string(index_ - 1);
    if (!what.empty()) return source_error(path_, frame + " " + what);
    return source_error(path_, frame + " is " + size_text(got.width, got.height) + ", expected " +
                                   size_text(first_size_.width, first_size_.height) + " as frame 0");
  }

  std::string path_;
  cv::VideoCapture capture_;
  double avg_fps_ = 0;
  int64_t step_ = 1, index_ = 0, given_ = 0;
};

bool is_image_file(const fs::path& p) {
  static const char* const kExtensions[] = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".ppm", ".pgm"};
  const std::string ext = lower(p.extension().string());
  return std::any_of(std::begin(kExtensions), std::end(kExtensions), [&](const char* e) { return ext == e; });
}

// A directory's images sorted by name, already sampled: image i at i / target_fps.
class ImageDirectoryDecoder final : public FrameDecoder {
 public:
  ImageDirectoryDecoder(const std::string& dir, double target_fps) {
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file() && entry.path().filename().string()[0] != '.' && is_image_file(entry.path()))
        files_.push_back(entry.path());
    if (files_.empty())
      throw source_error(dir, "no image files (expected .jpg, .jpeg, .png, .bmp, .webp, .tif, .tiff, .ppm or .pgm)");
    std::sort(files_.begin(), files_.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });
    fps = target_fps;
    expected = static_cast<int64_t>(files_.size());
  }

 private:
  bool decode(cv::Mat& bgr, double& time) override {
    if (next_ == files_.size()) return false;
    const auto& file = files_[next_];
    bgr = cv::imread(file.string(), cv::IMREAD_COLOR);  // gray and alpha become 3-channel BGR
    if (bgr.empty()) throw source_error(file.string(), "cannot decode the image");
    time = static_cast<double>(next_++) / fps;
    return true;
  }
  std::runtime_error error(cv::Size got, const std::string& what) const override {
    const std::string file = files_[next_ - 1].string();
    if (!what.empty()) return source_error(file, "image " + what);
    return source_error(file, "image is " + size_text(got.width, got.height) + ", expected " +
                                  size_text(first_size_.width, first_size_.height) + " as " +
                                  files_.front().filename().string() + " (all frames one size)");
  }

  std::vector<fs::path> files_;
  size_t next_ = 0;
};

std::unique_ptr<FrameDecoder> open_decoder(const std::string& path, double target_fps, bool directory, FrameStep step) {
  if (directory) return std::make_unique<ImageDirectoryDecoder>(path, target_fps);
  return std::make_unique<VideoDecoder>(path, target_fps, step);
}

// Every frame of a decoder, in one buffer.
Frames read_all(FrameDecoder& decoder) {
  Frames out;
  out.fps = decoder.fps;
  std::unique_ptr<FrameBuffer> buffer;
  cv::Mat bgr;
  double time = 0;
  while (decoder.next(bgr, time)) {
    if (!buffer) buffer = std::make_unique<FrameBuffer>(bgr.rows, bgr.cols, decoder.expected);
    buffer->push_bgr(bgr);
    out.timestamps.push_back(time);
  }
  out.rgb = buffer->take();
  return out;
}

Frames read_npy_frames(const std::string& path, double target_fps) {
  Frames out;
  out.rgb = read_npy(path);
  const auto sizes = out.rgb.sizes();
  if (out.rgb.scalar_type() != at::kByte || out.rgb.dim() != 4 || sizes[3] != 3 || sizes[0] == 0 ||
      sizes[1] == 0 || sizes[2] == 0) {
    throw source_error(path, "expected uint8 frames [N, H, W, 3] (RGB, N, H, W >= 1), got " +
                                 std::string(c10::getDtypeNames(out.rgb.scalar_type()).first) + " " + c10::str(sizes));
  }
  out.fps = target_fps;
  for (int64_t i = 0; i < sizes[0]; ++i) out.timestamps.push_back(static_cast<double>(i) / target_fps);
  return out;
}

// Frames decoded as they are read, with as many decoded ahead as upcoming_time() looked at.
class DecodingReader final : public FrameReader {
 public:
  explicit DecodingReader(std::unique_ptr<FrameDecoder> decoder) : decoder_(std::move(decoder)) {
    fps_ = decoder_->fps;
    expected_ = decoder_->expected;
  }
  std::optional<double> upcoming_time(int64_t k) override {
    while (static_cast<int64_t>(ahead_.size()) <= k && decode_one()) {
    }
    if (static_cast<int64_t>(ahead_.size()) <= k) return std::nullopt;
    return ahead_[static_cast<size_t>(k)].second;
  }
  Frames read(int64_t count) override {
    (void)upcoming_time(count - 1);
    Frames out;
    out.fps = fps_;
    out.first = position_;
    std::vector<at::Tensor> rgb;
    for (int64_t i = 0; i < count && !ahead_.empty(); ++i) {
      rgb.push_back(std::move(ahead_.front().first));
      out.timestamps.push_back(ahead_.front().second);
      ahead_.pop_front();
    }
    if (!rgb.empty()) out.rgb = at::stack(rgb);
    position_ += static_cast<int64_t>(rgb.size());
    return out;
  }

 private:
  bool decode_one() {
    cv::Mat bgr;
    double time = 0;
    if (ended_ || !decoder_->next(bgr, time)) return !(ended_ = true);
    at::Tensor rgb = at::empty({bgr.rows, bgr.cols, 3}, at::kByte);
    cv::Mat view(bgr.rows, bgr.cols, CV_8UC3, rgb.data_ptr());
    cv::cvtColor(bgr, view, cv::COLOR_BGR2RGB);
    ahead_.emplace_back(std::move(rgb), time);
    return true;
  }

  std::unique_ptr<FrameDecoder> decoder_;
  std::deque<std::pair<at::Tensor, double>> ahead_;
  bool ended_ = false;
};

// Frames already in memory, handed out in pieces (views).
class HeldReader final : public FrameReader {
 public:
  explicit HeldReader(Frames frames) : frames_(std::move(frames)) {
    fps_ = frames_.fps;
    expected_ = frames_.rgb.size(0);
  }
  std::optional<double> upcoming_time(int64_t k) override {
    if (position_ + k >= expected_) return std::nullopt;
    return frames_.timestamps[static_cast<size_t>(position_ + k)];
  }
  Frames read(int64_t count) override {
    const int64_t n = std::max<int64_t>(0, std::min(count, expected_ - position_));
    Frames out;
    out.fps = fps_;
    out.first = position_;
    if (n > 0) out.rgb = frames_.rgb.narrow(0, position_, n);
    out.timestamps.assign(frames_.timestamps.begin() + position_, frames_.timestamps.begin() + position_ + n);
    position_ += n;
    return out;
  }

 private:
  Frames frames_;
};

enum class SourceKind { Directory, Npy, Video };

SourceKind source_kind(const std::string& path, double target_fps) {
  if (!std::isfinite(target_fps) || target_fps <= 0)
    throw std::invalid_argument("target fps must be positive, got " + std::to_string(target_fps));
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throw source_error(path, "file not found");
  if (fs::is_directory(status)) return SourceKind::Directory;
  return lower(fs::path(path).extension().string()) == ".npy" ? SourceKind::Npy : SourceKind::Video;
}

}  // namespace

FrameStep frame_step_from_name(const std::string& name) {
  if (name == "reference") return FrameStep::Reference;
  if (name == "nearest") return FrameStep::Nearest;
  throw std::invalid_argument("frame step: expected reference or nearest, got '" + name + "'");
}

int64_t video_frame_step(double avg_fps, double target_fps, FrameStep step) {
  // std::nearbyint rounds halves to even, as Python's round().
  const double stride = step == FrameStep::Reference ? std::nearbyint(avg_fps) / target_fps : std::nearbyint(avg_fps / target_fps);
  return std::max<int64_t>(1, static_cast<int64_t>(stride));
}

Frames read_frames(const std::string& path, double target_fps, FrameStep step) {
  const SourceKind kind = source_kind(path, target_fps);
  if (kind == SourceKind::Npy) return read_npy_frames(path, target_fps);
  return read_all(*open_decoder(path, target_fps, kind == SourceKind::Directory, step));
}

std::unique_ptr<FrameReader> open_frame_reader(const std::string& path, double target_fps, FrameStep step) {
  const SourceKind kind = source_kind(path, target_fps);
  if (kind == SourceKind::Npy) return held_frame_reader(read_npy_frames(path, target_fps));
  return std::make_unique<DecodingReader>(open_decoder(path, target_fps, kind == SourceKind::Directory, step));
}

std::unique_ptr<FrameReader> held_frame_reader(Frames frames) { return std::make_unique<HeldReader>(std::move(frames)); }

}  // namespace svqa
