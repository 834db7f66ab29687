/* p4f_av.c - placeholder, being written. */
#include <config.h>
#include "p4f.h"
int p4f_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av_p, void *context) { return -FI_ENOSYS; }
struct p4f_av *p4f_av_of(struct fid_av *fid) { return NULL; }
struct p4f_domain *p4f_av_domain(const struct p4f_av *av) { return NULL; }
void p4f_av_get(struct p4f_av *av) { }
void p4f_av_put(struct p4f_av *av) { }
const union p4f_sockaddr *p4f_av_lookup_locked(struct p4f_av *av, fi_addr_t fi_addr) { return NULL; }
fi_addr_t p4f_av_reverse_lookup_locked(struct p4f_av *av, const struct sockaddr *sa) { return FI_ADDR_NOTAVAIL; }
