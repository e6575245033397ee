/*
 * cluster.h - a cluster name made safe for file names, URLs and the
 * Conduit comment.
 *
 * Both halves key their records by cluster (the bb half's StateDir files
 * and transfer comments, the switch half's controller URLs and session
 * files).  Slurm allows almost any text in ClusterName; these keep only
 * [A-Za-z0-9_.-], so a name can never add a path component or a field.
 */
#ifndef CBB_CLUSTER_H
#define CBB_CLUSTER_H

#define CBB_CLUSTER_MAX 64

/*
 * Copy `cluster` into dst (CBB_CLUSTER_MAX bytes), mapping anything but
 * [A-Za-z0-9_.-] to '_' and cutting at CBB_CLUSTER_MAX - 1 bytes; an
 * empty or missing name becomes "cluster".
 */
void cbb_cluster_safe(char *dst, const char *cluster);

#endif
