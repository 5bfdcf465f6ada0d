// Just enough of multipart/form-data (RFC 7578) for the front door to find the form field that
// names the model, and to replace its value, while the rest of the body is forwarded as it came.
// Pure; thread safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace swapd {

// The boundary parameter of a multipart/form-data Content-Type, or nullopt for another type.
std::optional<std::string> MultipartBoundary(std::string_view content_type);

// Where the value of a form field lies in the body.
struct FormField {
  size_t offset = 0;
  size_t size = 0;
};

struct FormScan {
  bool well_formed = false;        // every part is complete and the closing delimiter is there
  std::optional<FormField> field;  // the first field with the name asked for
};

// Looks through a multipart `body` with `boundary` for the field called `name`.
FormScan ScanForm(std::string_view body, std::string_view boundary, std::string_view name);

}  // namespace swapd
