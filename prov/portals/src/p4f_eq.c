/* p4f_eq.c - placeholder, being written. */
#include <config.h>
#include "p4f.h"
int p4f_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq_p, void *context) { return -FI_ENOSYS; }
ssize_t p4f_eq_write_event(struct p4f_eq *eq, uint32_t event, const void *buf, size_t len, uint64_t flags) { return -FI_ENOSYS; }
ssize_t p4f_eq_write_error(struct p4f_eq *eq, fid_t fid, void *context, uint64_t data, int err, int prov_errno) { return -FI_ENOSYS; }
struct p4f_eq *p4f_eq_of(struct fid_eq *fid) { return NULL; }
void p4f_eq_get(struct p4f_eq *eq) { }
void p4f_eq_put(struct p4f_eq *eq) { }
