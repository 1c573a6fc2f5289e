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

}  // namespace

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
  for (size_t k = 0; k < plot.series.size(); ++k) {
    const auto& s = plot.series[k];
    const cv::Scalar colour = kColours[k % kColours.size()];
    std::vector<cv::Point> points;
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i])) points.push_back({px(s.x[i]) - x0 - 1, py(s.y[i]) - y1 - 1});
    if (points.size() > 1) cv::polylines(canvas, points, false, colour, 2, cv::LINE_AA);
    if (s.markers)
      for (const auto& p : points) cv::circle(canvas, p, 5, colour, cv::FILLED, cv::LINE_AA);
    // Legend entry.
    const int ly = y1 + 10 + static_cast<int>(k) * 22;
    cv::line(img, {x1 + 15, ly}, {x1 + 40, ly}, colour, 3, cv::LINE_AA);
    std::string label = s.label.size() > 30 ? "~" + s.label.substr(s.label.size() - 29) : s.label;  // the end differs
    put_text(img, label, {x1 + 46, ly + 5}, 0.4);
  }

  std::vector<uchar> png;
  if (!cv::imencode(".png", img, png)) throw std::runtime_error(png_path + ": PNG encoding failed");
  write_file_atomically(png_path, std::string(png.begin(), png.end()));
}

}  // namespace svqa
