/* privs.c — see privs.h.  Raw capset(2): one call, no library needed. */
#include "privs.h"

#include <errno.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

int privs_drop(void)
{
    if (geteuid() != 0) return 0;
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};
    data[CAP_TO_INDEX(CAP_KILL)].effective = CAP_TO_MASK(CAP_KILL);
    data[CAP_TO_INDEX(CAP_KILL)].permitted = CAP_TO_MASK(CAP_KILL);
    if (syscall(SYS_capset, &hdr, data) < 0)
        return log_errno(LOG_WARNING, -errno, "cannot drop capabilities");
    log_info("running as root with CAP_KILL only (job hosts become their users)");
    return 0;
}
