// Text that is safe inside XML (SVG) character data and attribute values, whatever bytes a
// timeline name holds: markup characters escaped, control characters and bad UTF-8 replaced.
#pragma once

#include <string>
#include <string_view>

namespace pipeworks::viz {

// & < > " ' become entities; C0 control characters (tab and newline included, since SVG text
// would collapse them anyway) become spaces; invalid UTF-8 sequences become U+FFFD.
std::string xml_text(std::string_view text);

}  // namespace pipeworks::viz
