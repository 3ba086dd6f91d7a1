/*
 * broker/histcfg.h: how a historized variable's history is described, its
 * HistoricalDataConfiguration (Part 11 §5.2.2) with its
 * AggregateConfiguration (Part 13 §4.2.1.2): the `[history]` defaults and
 * the `[history NAME]` sections of the configuration file, one variable
 * each (docs/configuration.md "History"):
 *
 *   [history Tank1Level]       NAME: a label (errors name it)
 *   node = ns=1;s=Tank1.Level  the Variable (needed); it is historized
 *   stepped = true             the keys of [history] that describe a
 *   percent_data_good = 80       node (bk_histcfg_keys), each overriding
 *   ...                          the [history] default for this node
 *
 * The configuration reader (broker/config.c) hands the keys of these
 * sections to bk_histcfg_key() when the configuration has a table
 * (struct bk_config.histnodes), and bk_histcfg_finish() checks each
 * section at the end.  The NodeIds are resolved at the build
 * (broker/histconf.c).
 *
 * Broker only, at start.  Allocates the table (bk_histcfg_free).
 */
#ifndef BK_HISTCFG_H
#define BK_HISTCFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BK_HISTCFG_NAME_MAX 64      /* bytes of NAME, NUL included */
#define BK_HISTCFG_ID_MAX   256     /* bytes of the node's NodeId text */

/* ExceptionDeviationFormat (Part 11 §5.2.2, an enumeration). */
enum bk_histcfg_format {
    BK_HISTCFG_ABSOLUTE_VALUE = 0,
    BK_HISTCFG_PERCENT_OF_VALUE = 1,
    BK_HISTCFG_PERCENT_OF_RANGE = 2,
    BK_HISTCFG_PERCENT_OF_EU_RANGE = 3,
    BK_HISTCFG_UNKNOWN = 4
};

/* The keys that describe a node, in the order of struct bk_histcfg_def. */
enum bk_histcfg_key {
    BK_HC_STEPPED = 0,
    BK_HC_MIN_TIME_INTERVAL,
    BK_HC_MAX_TIME_INTERVAL,
    BK_HC_EXCEPTION_DEVIATION,
    BK_HC_EXCEPTION_DEVIATION_FORMAT,
    BK_HC_TREAT_UNCERTAIN_AS_BAD,
    BK_HC_PERCENT_DATA_BAD,
    BK_HC_PERCENT_DATA_GOOD,
    BK_HC_USE_SLOPED_EXTRAPOLATION,
    BK_HC_NKEYS
};

/* Their names, as in [history] and [history NAME]. */
extern const char *const bk_histcfg_keys[BK_HC_NKEYS];

/* One node's HistoricalDataConfiguration as its properties say it. */
struct bk_histcfg_def {
    bool    stepped;
    double  min_time_interval_ms;   /* Duration */
    double  max_time_interval_ms;
    double  exception_deviation;
    uint8_t exception_deviation_format;     /* enum bk_histcfg_format */
    bool    treat_uncertain_as_bad;
    uint8_t percent_data_bad;       /* 0..100 */
    uint8_t percent_data_good;
    bool    use_sloped_extrapolation;
};

/* One [history NAME] section. */
struct bk_histcfg_one {
    char                  name[BK_HISTCFG_NAME_MAX];
    char                  node[BK_HISTCFG_ID_MAX];
    struct bk_histcfg_def def;      /* the keys given (seen) */
    uint32_t              seen;     /* 1 << enum bk_histcfg_key */
};

/* Every [history NAME] section of a file. */
struct bk_histcfg {
    struct bk_histcfg_one *a;
    uint32_t               n;
    uint32_t               cap;
};

/* True when section ("history NAME") is one of these. */
int bk_histcfg_is_section(const char *section);

/*
 * Key k's value text into d: 0, or -1 (a bad value; the caller says
 * which key).  Booleans are true or false; the intervals milliseconds
 * >= 0; the percentages integers 0..100; the format absolute_value,
 * percent_of_value, percent_of_range, percent_of_eu_range or unknown.
 */
int bk_histcfg_parse(enum bk_histcfg_key k, const char *value,
                     struct bk_histcfg_def *d);

/*
 * The key name = value of section ("history NAME"): a new NAME opens a
 * new section (a NAME seen before, not just before, is refused).  0, or
 * -1 with a message in err (the caller adds the line).
 */
int bk_histcfg_key(struct bk_histcfg *hc, const char *section,
                   const char *name, const char *value, char *err,
                   size_t errlen);

/*
 * After the file at path was read: each section names its node.  0, or
 * -1 with "PATH: [history NAME]: ..." in err.
 */
int bk_histcfg_finish(const struct bk_histcfg *hc, const char *path,
                      char *err, size_t errlen);

/* d with the keys of section one given over it. */
void bk_histcfg_apply(const struct bk_histcfg_one *one,
                      struct bk_histcfg_def *d);

/* Free the table. */
void bk_histcfg_free(struct bk_histcfg *hc);

#endif /* BK_HISTCFG_H */
