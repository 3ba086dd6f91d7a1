/*
 * broker/nodeset_int.h: what the NodeSet importer's two files share (not
 * for others): the parsed set as broker/nodeset.c (the XML walk) builds
 * it and broker/nsbuild.c (the insertion into the node store) reads it.
 * NodeIds are already in server namespace indices; strings and encoded
 * values live in the set's byte heap (offset 0: none).
 */
#ifndef BK_NODESET_INT_H
#define BK_NODESET_INT_H

#include <stdint.h>

/* A NodeId of the set: server namespace index; bytes in the heap. */
struct bk_nsx_id {
    uint16_t ns;
    uint8_t  idtype;            /* SHM_ID_* */
    uint32_t num;               /* numeric */
    uint32_t off;               /* others: heap offset of len bytes */
    uint32_t len;
};

struct bk_nsx_node {
    struct bk_nsx_id id;
    struct bk_nsx_id data_type;
    uint8_t  node_class;        /* SHM_NC_* */
    uint8_t  flags;             /* SHM_NF_* */
    uint8_t  event_notifier;
    uint8_t  access_level;
    uint8_t  user_access_level;
    uint8_t  has_data_type;
    uint8_t  value_bt;          /* built-in type of the value, 0 none */
    uint8_t  has_value;
    uint16_t browse_ns;
    uint16_t file;
    uint32_t browse_name;       /* heap offsets of NUL-terminated text */
    uint32_t dn_text, dn_locale;
    uint32_t desc_text, desc_locale;
    uint32_t inv_text, inv_locale;
    uint32_t write_mask, user_write_mask;
    int32_t  value_rank;
    uint32_t array_dims;        /* heap offset of { n, dims[n] }, 0 none */
    uint32_t value, value_len;  /* the encoded Variant */
    uint32_t line, value_line;
    uint32_t store;             /* node index once added */
    double   min_sampling;
};

struct bk_nsx_ref {
    uint32_t         src;       /* index in the set's nodes */
    struct bk_nsx_id type;
    struct bk_nsx_id target;
    uint8_t          forward;
    uint16_t         file;
    uint32_t         line;
};

struct bk_nodeset {
    uint8_t            *heap;
    size_t              heap_len, heap_cap;
    struct bk_nsx_node *nodes;
    uint32_t            nnodes, cap_nodes;
    struct bk_nsx_ref  *refs;
    uint32_t            nrefs, cap_refs;
    char              **uris;       /* the server's, from index 0 */
    uint32_t            nuris;
    char              **files;
    uint32_t            nfiles;
    char              **models;     /* ModelUris of the files so far */
    uint32_t            nmodels;
    uint32_t            max_nodes;
    uint64_t            strings;
    uint64_t            vheap;
};

#endif /* BK_NODESET_INT_H */
