#include "core/util/callbacks.h"

#include "core/util/error.h"

namespace attnlens {

void Callbacks::checkCancel() const {
    if (cancelled && cancelled()) throw Cancelled();
}

} // namespace attnlens
