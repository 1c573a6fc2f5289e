#include "core/report/line_plot.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "core/io/atomic_file.h"

namespace svqa {
namespace {

constexpr int kWidth = 960, kHeight = 600;
constexpr int kLeft = 90, kRight = 250, kTop = 60, kBottom = 70;  // the legend sits right of the axes
const cv::Scalar kBlack(0, 0, 0), kGrey(215, 215, 215);
const auto kFont = cv::FONT_HERSHEY_SIMPLEX;

// Tableau-like palette (BGR), distinguishable in print.
const std::vector<cv::Scalar> kColours = {{180, 119, 31}, {14, 127, 255}, {44, 160, 44},  {40, 39, 214},
                                          {189, 103, 148}, {75, 86, 140}, {194, 119, 227}, {127, 127, 127},
                                          {34, 189, 188},  {207, 190, 23}};

// Round tick step for about `count` ticks over [lo, hi]: 1, 2 or 5 times a power of ten.
double tick_step(double lo, double hi, int count) {
  const double raw = (hi - lo) / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

std::string tick_text(double v, double step) {
  std::ostringstream s;
  const int digits = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
  s << std::fixed << std::setprecision(digits) << (std::abs(v) < step * 1e-9 ? 0.0 : v);
  return s.str();
}

struct Range {
  double lo, hi;
};

// The data range padded by 5 %; a single value gets a unit-wide range around it.
Range padded_range(const std::vector<double>& values) {
  const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  double lo = *mn, hi = *mx;
  if (hi - lo < 1e-12) {
    const double half = std::max(std::abs(lo) * 0.1, 0.5);
    return {lo - half, hi + half};
  }
  const double pad = (hi - lo) * 0.05;
  return {lo - pad, hi + pad};
}

void put_text(cv::Mat& img, const std::string& text, cv::Point at, double scale = 0.45, int thickness = 1) {
  cv::putText(img, text, at, kFont, scale, kBlack, thickness, cv::LINE_AA);
}

int text_width(const std::string& text, double scale) {
  int baseline = 0;
  return cv::getTextSize(text, kFont, scale, 1, &baseline).width;
}

// Series k's line pattern: solid, dashed, dotted (pixels on, off; 0: solid).
std::pair<int, int> dash_of(size_t k) {
  static const std::pair<int, int> patterns[] = {{0, 0}, {12, 7}, {3, 5}};
  return patterns[k % 3];
}

void dashed_line(cv::Mat& img, cv::Point a, cv::Point b, const cv::Scalar& colour, int thickness,
                 std::pair<int, int> dash, double& phase) {
  if (dash.first == 0) {
    cv::line(img, a, b, colour, thickness, cv::LINE_AA);
    return;
  }
  const double length = std::hypot(b.x - a.x, b.y - a.y), period = dash.first + dash.second;
  for (double t = 0; t < length;) {
    const double in_period = std::fmod(phase + t, period);
    const double step = std::min(length - t, in_period < dash.first ? dash.first - in_period : period - in_period);
    if (in_period < dash.first) {
      auto at = [&](double u) {
        return cv::Point(static_cast<int>(std::lround(a.x + (b.x - a.x) * u / length)),
                         static_cast<int>(std::lround(a.y + (b.y - a.y) * u / length)));
      };
      cv::line(img, at(t), at(t + step), colour, thickness, cv::LINE_AA);
    }
    t += std::max(step, 1e-6);
  }
  phase = std::fmod(phase + length, period);
}

// Series k's marker: a filled dot, then hollow square, triangle, diamond (larger than the dot, so a
// dot under them still shows).
void marker(cv::Mat& img, cv::Point p, size_t k, const cv::Scalar& colour) {
  switch (k % 4) {
    case 0: cv::circle(img, p, 5, colour, cv::FILLED, cv::LINE_AA); return;
    case 1: cv::rectangle(img, {p.x - 7, p.y - 7}, {p.x + 7, p.y + 7}, colour, 2, cv::LINE_AA); return;
    case 2: {
      const std::vector<cv::Point> t = {{p.x, p.y - 9}, {p.x - 8, p.y + 6}, {p.x + 8, p.y + 6}};
      cv::polylines(img, t, true, colour, 2, cv::LINE_AA);
      return;
    }
    default: {
      const std::vector<cv::Point> d = {{p.x, p.y - 10}, {p.x - 10, p.y}, {p.x, p.y + 10}, {p.x + 10, p.y}};
      cv::polylines(img, d, true, colour, 2, cv::LINE_AA);
    }
  }
}

}  // namespace

std::vector<std::string> wrap_text(const std::string& text, int width, double scale) {
  std::vector<std::string> lines;
  std::string line;
  for (const char c : text) {
    if (!line.empty() && text_width(line + c, scale) > width) {
      size_t cut = line.find_last_of(" ,");  // between words if it can, else inside a name
      if (cut == std::string::npos) cut = line.find_last_of("_=");
      if (cut != std::string::npos && cut + 1 < line.size()) {
        lines.push_back(line.substr(0, cut + 1));
        line = line.substr(cut + 1);
      } else {
        lines.push_back(line);
        line.clear();
      }
      while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    }
    if (!(line.empty() && c == ' ' && !lines.empty())) line += c;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::vector<int> coinciding_series(const std::vector<std::vector<std::pair<int, int>>>& points, int pixels) {
  std::vector<int> out(points.size(), -1);
  for (size_t k = 0; k < points.size(); ++k)
    for (size_t j = 0; j < k && out[k] < 0; ++j) {
      if (points[j].size() != points[k].size() || points[k].empty()) continue;
      bool same = true;
      for (size_t i = 0; i < points[k].size() && same; ++i)
        same = std::abs(points[j][i].first - points[k][i].first) <= pixels &&
               std::abs(points[j][i].second - points[k][i].second) <= pixels;
      if (same) out[k] = static_cast<int>(j);
    }
  return out;
}

void write_line_plot(const LinePlot& plot, const std::string& png_path) {
  std::vector<double> xs, ys;
  for (const auto& s : plot.series)
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i])) xs.push_back(s.x[i]), ys.push_back(s.y[i]);
  if (xs.empty()) throw std::runtime_error(png_path + ": nothing to plot (no finite points)");
  if (plot.marker_x) xs.push_back(*plot.marker_x);
  const Range xr = padded_range(xs);
  const Range yr = plot.y_range ? Range{plot.y_range->first, plot.y_range->second} : padded_range(ys);

  cv::Mat img(kHeight, kWidth, CV_8UC3, cv::Scalar(255, 255, 255));
  const int x0 = kLeft, x1 = kWidth - kRight, y0 = kHeight - kBottom, y1 = kTop;
  auto px = [&](double x) { return static_cast<int>(std::lround(x0 + (x - xr.lo) / (xr.hi - xr.lo) * (x1 - x0))); };
  auto py = [&](double y) { return static_cast<int>(std::lround(y0 - (y - yr.lo) / (yr.hi - yr.lo) * (y0 - y1))); };

  // Grid and ticks.
  const double xs_step = tick_step(xr.lo, xr.hi, 6), ys_step = tick_step(yr.lo, yr.hi, 6);
  for (double v = std::ceil(xr.lo / xs_step) * xs_step; v <= xr.hi; v += xs_step) {
    cv::line(img, {px(v), y0}, {px(v), y1}, kGrey, 1);
    const std::string t = tick_text(v, xs_step);
    put_text(img, t, {px(v) - text_width(t, 0.45) / 2, y0 + 20});
  }
  for (double v = std::ceil(yr.lo / ys_step) * ys_step; v <= yr.hi; v += ys_step) {
    cv::line(img, {x0, py(v)}, {x1, py(v)}, kGrey, 1);
    const std::string t = tick_text(v, ys_step);
    put_text(img, t, {x0 - 8 - text_width(t, 0.45), py(v) + 5});
  }
  cv::rectangle(img, {x0, y1}, {x1, y0}, kBlack, 1);

  // Labels; the y label is drawn horizontally above the axis (OpenCV draws no rotated text).
  put_text(img, plot.title, {x0, 24}, 0.6, 1);
  put_text(img, plot.x_label, {(x0 + x1) / 2 - text_width(plot.x_label, 0.5) / 2, kHeight - 20}, 0.5);
  put_text(img, plot.y_label, {10, y1 - 8}, 0.45);

  if (plot.marker_x) {
    for (int y = y1; y < y0; y += 10) cv::line(img, {px(*plot.marker_x), y}, {px(*plot.marker_x), std::min(y + 5, y0)}, kBlack, 1);
    put_text(img, plot.marker_label, {px(*plot.marker_x) - text_width(plot.marker_label, 0.4) - 4, y1 + 15}, 0.4);
  }

  cv::Mat canvas = img(cv::Rect(x0 + 1, y1 + 1, x1 - x0 - 1, y0 - y1 - 1));  // series clipped to the axes
  std::vector<std::vector<cv::Point>> points(plot.series.size());
  std::vector<std::vector<std::pair<int, int>>> pixel_points(plot.series.size());
  for (size_t k = 0; k < plot.series.size(); ++k) {
    const auto& s = plot.series[k];
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i])) {
        points[k].push_back({px(s.x[i]) - x0 - 1, py(s.y[i]) - y1 - 1});
        pixel_points[k].emplace_back(points[k].back().x, points[k].back().y);
      }
  }
  const std::vector<int> same_as = coinciding_series(pixel_points);
  struct PointNote {
    cv::Point at;
    std::vector<std::pair<std::string, cv::Scalar>> lines;
  };
  std::vector<PointNote> point_notes;
  constexpr double kLegendScale = 0.4;
  const int legend_text_x = x1 + 50, legend_width = kWidth - legend_text_x - 6;
  int legend_y = y1 + 10;
  for (size_t k = 0; k < plot.series.size(); ++k) {
    const auto& s = plot.series[k];
    const cv::Scalar colour = kColours[k % kColours.size()];
    double phase = 0;
    for (size_t i = 1; i < points[k].size(); ++i) dashed_line(canvas, points[k][i - 1], points[k][i], colour, 2, dash_of(k), phase);
    for (size_t i = 0; i < points[k].size(); ++i) {
      if (s.markers) marker(canvas, points[k][i], k, colour);
      if (i < s.point_labels.size() && !s.point_labels[i].empty()) {
        // Points at one place (of any series) stack their labels instead of writing over each other.
        auto at = std::find_if(point_notes.begin(), point_notes.end(), [&](const PointNote& n) {
          return std::abs(n.at.x - points[k][i].x) <= 2 && std::abs(n.at.y - points[k][i].y) <= 2;
        });
        if (at == point_notes.end()) at = point_notes.insert(point_notes.end(), {points[k][i], {}});
        at->lines.emplace_back(s.point_labels[i], colour);
      }
    }
    // Legend entry: the series' line pattern and marker, its label wrapped, and what it hides under.
    double legend_phase = 0;
    dashed_line(img, {x1 + 12, legend_y}, {x1 + 42, legend_y}, colour, 2, dash_of(k), legend_phase);
    if (s.markers) marker(img, {x1 + 27, legend_y}, k, colour);
    std::string label = s.label;
    if (same_as[k] >= 0) label += " (same points as: " + plot.series[static_cast<size_t>(same_as[k])].label + ")";
    for (const auto& line : wrap_text(label, legend_width, kLegendScale)) {
      put_text(img, line, {legend_text_x, legend_y + 5}, kLegendScale);
      legend_y += 16;
    }
    legend_y += 8;
  }
  for (const auto& note : point_notes) {
    const int n = static_cast<int>(note.lines.size());
    int y = note.at.y - 8 - 12 * (n - 1);
    if (y < 12) y = note.at.y + 18;  // no room above: below the point
    for (const auto& [text, colour] : note.lines) {
      const int w = text_width(text, 0.33);
      const int x = note.at.x + 10 + w < canvas.cols - 2 ? note.at.x + 10 : std::max(2, note.at.x - 10 - w);  // on the side with room
      cv::putText(canvas, text, {x, y}, kFont, 0.33, colour, 1, cv::LINE_AA);
      y += 12;
    }
  }

  std::vector<uchar> png;
  if (!cv::imencode(".png", img, png)) throw std::runtime_error(png_path + ": PNG encoding failed");
  write_file_atomically(png_path, std::string(png.begin(), png.end()));
}

}  // namespace svqa
