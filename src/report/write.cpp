// Writing the rendered files into the output directory.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "firstwork/report/render.hpp"

namespace firstwork::report {

Result<std::vector<std::string>> writeReport(const Report& report,
                                             const std::vector<Format>& formats,
                                             const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<OutputFile> files;
  for (Format f : formats) {
    switch (f) {
      case Format::Markdown:
        for (auto& x : renderMarkdown(report)) files.push_back(std::move(x));
        break;
      case Format::Csv:
        for (auto& x : renderCsv(report)) files.push_back(std::move(x));
        break;
      case Format::Json:
        files.push_back(renderJson(report));
        break;
    }
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return makeError(fmt::format("cannot create the output directory {}: {}", dir, ec.message()));
  std::vector<std::string> written;
  for (const auto& f : files) {
    const fs::path path = fs::path(dir) / f.name;
    // Write beside, then rename: a reader never sees half a file, a failure leaves no partial file.
    const fs::path tmp = path.string() + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << f.content;
      out.flush();
      if (!out) {
        fs::remove(tmp, ec);
        return makeError(fmt::format("cannot write {}", path.string()));
      }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
      fs::remove(tmp, ec);
      return makeError(fmt::format("cannot write {}: {}", path.string(), ec.message()));
    }
    written.push_back(path.string());
  }
  return written;
}

}  // namespace firstwork::report
