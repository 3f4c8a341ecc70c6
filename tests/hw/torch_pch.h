// The hw tests' precompiled header: LibTorch, parsed once for the whole test binary. glog's
// CHECK(cond), which LibTorch defines, is undefined again so that Catch defines its own in every
// test file (hw_test_support.h does the same for a build without this header).
#pragma once

#include <torch/torch.h>

#undef CHECK
