/* p4f_wait.c - placeholder, being written. */
#include <config.h>
#include "p4f.h"
int p4f_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr, struct fid_wait **waitset_p) { return -FI_ENOSYS; }
int p4f_trywait(struct fid_fabric *fabric, struct fid **fids, int count) { return -FI_ENOSYS; }
int p4f_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr, struct fid_poll **pollset_p) { return -FI_ENOSYS; }
