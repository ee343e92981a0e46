#include <catch2/catch.hpp>

#include <regex>

#include "firstwork/report/svg.hpp"

using namespace firstwork::report::svg;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("SVG text and numbers are escaped and formatted deterministically", "[report][svg]") {
  CHECK(escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
  CHECK(escape(std::string("x\x01y")) == "x y");
  CHECK(number(12) == "12");
  CHECK(number(12.5) == "12.5");
  CHECK(number(-3.254) == "-3.25");
  CHECK(number(-0.001) == "0");
  CHECK(number(1.005) == "1");  // two decimals at most (1.005 is 1.00499… in binary)
}

TEST_CASE("An SVG document is well formed and lists its shapes in order", "[report][svg]") {
  Document d(200, 100);
  d.title("Stranded <GPUs> & more");
  d.rect(0, 0, 200, 100, {"none", "#ffffff", 1, ""});
  d.line(10, 90, 190, 90, {"#444444", "none", 1.5, "4 2"});
  d.polyline({{10, 90}, {50, 90}, {50, 10}}, {"#1f77b4", "none", 2, ""});
  d.polyline({}, {"#1f77b4", "none", 2, ""});  // nothing to draw: left out
  d.circle(50, 10, 2.5, {"#1f77b4", "#1f77b4", 1, ""});
  d.text(100, 50, "R+8m & more", {12, Anchor::Middle, "#222222", true, -90});
  std::string s = d.str();
  CHECK(s.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(s.find("width=\"200\" height=\"100\" viewBox=\"0 0 200 100\"") != std::string::npos);
  CHECK(s.find("<title>Stranded &lt;GPUs&gt; &amp; more</title>") != std::string::npos);
  CHECK(s.find("<line x1=\"10\" y1=\"90\" x2=\"190\" y2=\"90\" stroke=\"#444444\" fill=\"none\" "
               "stroke-width=\"1.5\" stroke-dasharray=\"4 2\"/>") != std::string::npos);
  CHECK(s.find("<polyline points=\"10,90 50,90 50,10\"") != std::string::npos);
  CHECK(count(s, "<polyline") == 1);
  CHECK(s.find("<circle cx=\"50\" cy=\"10\" r=\"2.5\"") != std::string::npos);
  CHECK(s.find("text-anchor=\"middle\"") != std::string::npos);
  CHECK(s.find("font-weight=\"bold\" transform=\"rotate(-90 100 50)\">R+8m &amp; more</text>") !=
        std::string::npos);
  CHECK(s.substr(s.size() - 7) == "</svg>\n");
  // Every element that is opened is closed (self-closing shapes, paired title/text/svg).
  CHECK(count(s, "<text") == count(s, "</text>"));
  CHECK(count(s, "<svg") == count(s, "</svg>"));
}

TEST_CASE("Scales map data onto pixels, linearly or by log10", "[report][svg]") {
  Scale lin(0, 100, 50, 250);
  CHECK(lin(0) == Approx(50));
  CHECK(lin(50) == Approx(150));
  CHECK(lin(100) == Approx(250));
  Scale down(0, 32, 358, 58);  // y axis: 0 at the bottom
  CHECK(down(16) == Approx(208));
  Scale log(10, 1000, 0, 200, true);
  CHECK(log(100) == Approx(100));  // one decade of two
  CHECK(log(1) == Approx(0));      // below the range: clamped to its start
  Scale flat(5, 5, 0, 100);
  CHECK(flat(5) == Approx(50));
}

TEST_CASE("Ticks are round numbers and readable durations", "[report][svg]") {
  CHECK(niceTicks(0, 32, 6) == std::vector<double>{0, 10, 20, 30, 40});
  CHECK(niceTicks(0, 1, 6) == std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1});
  CHECK(niceTicks(0, 47, 6) == std::vector<double>{0, 10, 20, 30, 40, 50});
  CHECK(niceTicks(3, 3, 6) == std::vector<double>{3});
  // 12 minutes on at most 9 ticks: 2-minute steps (1-minute steps would need 13).
  CHECK(durationTicks(0, 720, 9, false) ==
        std::vector<double>{0, 120, 240, 360, 480, 600, 720});
  CHECK(durationTicks(0, 45, 9, false) == std::vector<double>{0, 10, 20, 30, 40, 50});
  // Log axis from 30 s to 2 h: the readable steps inside, thinned to at most 5.
  CHECK(durationTicks(30, 7200, 5, true) == std::vector<double>{30, 120, 600, 1800, 7200});
  CHECK(shortDuration(0) == "0");
  CHECK(shortDuration(30) == "30s");
  CHECK(shortDuration(480) == "8m");
  CHECK(shortDuration(90) == "1m 30s");
  CHECK(shortDuration(3600) == "1h");
  CHECK(shortDuration(5400) == "1h 30m");
  CHECK(shortDuration(172800) == "2d");
}

TEST_CASE("A step chart draws each step, markers, reference lines and a legend", "[report][svg]") {
  Chart c;
  c.title = "Recovery of worker-1";
  c.xLabel = "time since reconnection";
  c.yLabel = "GPUs";
  c.series.push_back({"productive <GPUs>", {{0, 0}, {480, 16}, {720, 32}}, true, false, false, ""});
  c.lines.push_back({32, "usable GPUs: 32", "#2ca02c"});
  c.markers.push_back({30, "first dispatch (R+30s)"});
  c.xMax = 720;
  std::string s = renderChart(c);
  // x: 720 s over [70, 736] px; y: 0..40 GPUs (round ticks above 32) over [358, 58] px.
  //   (0, 0) → (70, 358); (480, 16) → (70 + 480/720 × 666, 358 − 16/40 × 300) = (514, 238);
  //   (720, 32) → (736, 118). A step holds 0 until 480 s: (514, 358) comes first.
  CHECK(s.find("<polyline points=\"70,358 514,358 514,238 736,238 736,118\" stroke=\"#1f77b4\"") !=
        std::string::npos);
  CHECK(s.find(">productive &lt;GPUs&gt;</text>") != std::string::npos);
  CHECK(s.find(">usable GPUs: 32</text>") != std::string::npos);
  CHECK(s.find(">1  first dispatch (R+30s)</text>") != std::string::npos);
  CHECK(s.find(">8m</text>") != std::string::npos);   // an x tick
  CHECK(s.find(">40</text>") != std::string::npos);   // the top y tick
  CHECK(renderChart(c) == s);                         // deterministic

  Chart empty;
  empty.title = "nothing";
  CHECK(renderChart(empty).find("no data in this period") != std::string::npos);

  Chart pct;
  pct.yPercent = true;
  pct.logX = true;
  pct.series.push_back({"a", {{30, 0}, {30, 0.5}, {7200, 1}}, true, false, true, ""});
  std::string p = renderChart(pct);
  CHECK(p.find(">100 %</text>") != std::string::npos);
  CHECK(p.find(">2h</text>") != std::string::npos);
  CHECK(count(p, "<circle") == 3);
}
