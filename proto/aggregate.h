/*
 * proto/aggregate.h: the Part 13 aggregate engine behind ReadProcessed
 * (Part 11 §6.5.4): the 37 standard aggregates of Part 13 §5.4.3 over one
 * node's raw samples, interval by interval.
 *
 * Input: the raw samples of [start, end) sorted by time (ascending, ties
 * kept in store order), the sample just before the range and the one just
 * after it when the store has them (the bounds, Part 13 §3.1.8-§3.1.10),
 * the annotation timestamps for AnnotationCount, and the
 * AggregateConfiguration (Part 13 §4.2.1.2) with the node's Stepped flag.
 * Output: one result per interval, {timestamp, value or none, status}, in
 * an array the caller sizes with ua_aggregate_intervals().
 *
 * Time: OPC UA DateTime, 100 ns ticks since 1601 (ua_datetime); the
 * processing interval is a Duration in milliseconds as on the wire.
 * Intervals (Part 13 §5.4.2.2, Part 11 §6.5.4): [start + k*pi,
 * start + (k+1)*pi), the last one cut at end; processingInterval 0 (or
 * one longer than the range) gives one interval for the whole range.  When
 * end < start time runs backward (Part 11 §6.5.4 "reverse order", Part 13
 * §3.1.3): the intervals are (start - (k+1)*pi, start - k*pi], later
 * first, each stamped with its later time, its start bound the later one,
 * EffectiveEndTime just after its earlier end: exactly a forward read of
 * the data mirrored in time.  The samples are still passed ascending;
 * before / after stay the samples before / after the range in time.
 *
 * Samples whose status is BadNoData are not data: they mark where the
 * collection has nothing (Part 13 Annex A's "Point created" entry); an
 * interval that holds both data and such a stretch, or the stretch after
 * the last stored sample when no later sample is given, is Partial (Part
 * 13 §5.3.3.2); intervals wholly before the first data or wholly after the
 * last are BadNoData.
 *
 * Status rules (Part 13 §5.3.3 and §5.4.3.2): results carry the historian
 * InfoBits (InfoType DataValue, Calculated / Interpolated, Partial,
 * MultipleValues); their severity is Good, Uncertain (UncertainDataSubNormal)
 * or Bad by the share of Bad (Uncertain too when TreatUncertainAsBad) data
 * against PercentDataBad and of Good data against PercentDataGood, counted
 * by samples for the raw aggregates and by time for the time-weighted ones.
 *
 * Pure: no I/O, no allocation, no global state; reentrant.
 */
#ifndef UA_AGGREGATE_H
#define UA_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/*
 * The historian bits of a StatusCode (Part 11 §6.3 / Part 4 §7.39 InfoBits
 * with InfoType DataValue; Part 13 §5.3.3 tables 47 and 48).
 */
#define UA_AGG_INFOTYPE_DATAVALUE 0x00000400u
#define UA_AGG_RAW                0x00000000u
#define UA_AGG_CALCULATED         0x00000001u
#define UA_AGG_INTERPOLATED       0x00000002u
#define UA_AGG_PARTIAL            0x00000004u
#define UA_AGG_EXTRADATA          0x00000008u
#define UA_AGG_MULTIVALUE         0x00000010u

/* The standard aggregates, in the order of Part 13 (1.05) §5.4.3. */
enum ua_agg {
    UA_AGG_INTERPOLATIVE,           /* §5.4.3.4 */
    UA_AGG_AVERAGE,                 /* §5.4.3.5 */
    UA_AGG_TIMEAVERAGE,             /* §5.4.3.6 */
    UA_AGG_TIMEAVERAGE2,            /* §5.4.3.7 */
    UA_AGG_TOTAL,                   /* §5.4.3.8 */
    UA_AGG_TOTAL2,                  /* §5.4.3.9 */
    UA_AGG_MINIMUM,                 /* §5.4.3.10 */
    UA_AGG_MAXIMUM,                 /* §5.4.3.11 */
    UA_AGG_MINIMUMACTUALTIME,       /* §5.4.3.12 */
    UA_AGG_MAXIMUMACTUALTIME,       /* §5.4.3.13 */
    UA_AGG_RANGE,                   /* §5.4.3.14 */
    UA_AGG_MINIMUM2,                /* §5.4.3.15 */
    UA_AGG_MAXIMUM2,                /* §5.4.3.16 */
    UA_AGG_MINIMUMACTUALTIME2,      /* §5.4.3.17 */
    UA_AGG_MAXIMUMACTUALTIME2,      /* §5.4.3.18 */
    UA_AGG_RANGE2,                  /* §5.4.3.19 */
    UA_AGG_ANNOTATIONCOUNT,         /* §5.4.3.20 */
    UA_AGG_COUNT,                   /* §5.4.3.21 */
    UA_AGG_DURATIONINSTATEZERO,     /* §5.4.3.22 */
    UA_AGG_DURATIONINSTATENONZERO,  /* §5.4.3.23 */
    UA_AGG_NUMBEROFTRANSITIONS,     /* §5.4.3.24 */
    UA_AGG_START,                   /* §5.4.3.25 */
    UA_AGG_END,                     /* §5.4.3.26 */
    UA_AGG_DELTA,                   /* §5.4.3.27 */
    UA_AGG_STARTBOUND,              /* §5.4.3.28 */
    UA_AGG_ENDBOUND,                /* §5.4.3.29 */
    UA_AGG_DELTABOUNDS,             /* §5.4.3.30 */
    UA_AGG_DURATIONGOOD,            /* §5.4.3.31 */
    UA_AGG_DURATIONBAD,             /* §5.4.3.32 */
    UA_AGG_PERCENTGOOD,             /* §5.4.3.33 */
    UA_AGG_PERCENTBAD,              /* §5.4.3.34 */
    UA_AGG_WORSTQUALITY,            /* §5.4.3.35 */
    UA_AGG_WORSTQUALITY2,           /* §5.4.3.36 */
    UA_AGG_STANDARDDEVIATIONSAMPLE, /* §5.4.3.37 */
    UA_AGG_VARIANCESAMPLE,          /* §5.4.3.38 */
    UA_AGG_STANDARDDEVIATIONPOPULATION, /* §5.4.3.39 */
    UA_AGG_VARIANCEPOPULATION,      /* §5.4.3.40 */
    UA_AGG_COUNT_                   /* the number of aggregates (37) */
};

/*
 * The result's DataType: most are Double; the durations are Duration
 * (Double, ms), the counts Int32, the qualities StatusCode (the value
 * carries the StatusCode as a double of its 32 bits), the actual times
 * keep the raw value's type (Double here).
 */
enum ua_agg_type {
    UA_AGG_T_DOUBLE,
    UA_AGG_T_DURATION,
    UA_AGG_T_INT32,
    UA_AGG_T_STATUSCODE
};

/* One aggregate function: its NodeId (ns 0), BrowseName, result type. */
struct ua_agg_info {
    enum ua_agg      agg;
    uint32_t         nodeid;        /* i=2341 ... (nodeids_gen.h) */
    const char      *name;          /* "Interpolative" ... */
    enum ua_agg_type type;
};

/* The AggregateConfiguration (Part 13 §4.2.1.2) and the node's Stepped. */
struct ua_agg_config {
    bool    treat_uncertain_as_bad;
    uint8_t percent_data_bad;       /* 0..100 */
    uint8_t percent_data_good;      /* 0..100 */
    bool    use_sloped_extrapolation;
    bool    stepped;                /* the node's Stepped property */
};

/* A raw sample as the store keeps it (value already converted to double). */
struct ua_agg_sample {
    ua_datetime ts;                 /* SourceTimestamp */
    double      value;              /* meaningless when status is Bad */
    uint32_t    status;             /* the stored StatusCode */
};

/*
 * A node's data for one request: s[0..n) in ascending time order, covering
 * [min(start,end), max(start,end)) (samples outside it act as bounds).
 * before / after: the last sample before s[0] and the first after s[n-1]
 * when the store has them, or NULL (then the collection starts / ends
 * there).  Timestamps lie in [0, UA_AGG_TIME_MAX].
 * annotations[0..n_annotations): the annotations' timestamps, ascending.
 */
struct ua_agg_input {
    const struct ua_agg_sample *s;
    size_t                      n;
    const struct ua_agg_sample *before;
    const struct ua_agg_sample *after;
    const ua_datetime          *annotations;
    size_t                      n_annotations;
};

/* One interval's result. */
struct ua_agg_result {
    ua_datetime ts;                 /* interval start, or the actual time */
    double      value;              /* valid only when has_value */
    uint32_t    status;             /* severity/sub-code | InfoType | bits */
    bool        has_value;
};

/* The 37 aggregates' table entry by enum, NodeId, or BrowseName. */
const struct ua_agg_info *ua_aggregate_info(enum ua_agg agg);
const struct ua_agg_info *ua_aggregate_by_nodeid(uint32_t nodeid);
const struct ua_agg_info *ua_aggregate_by_name(const char *name);

/*
 * The latest time the engine takes: 9999-12-31 23:59:59 UTC, the largest
 * DateTime Part 6 §5.2.2.5 encodes; times run from 0 (1601) to this.
 */
#define UA_AGG_TIME_MAX INT64_C(2650467743990000000)

/*
 * The number of intervals ReadProcessed has over [start, end) at
 * processing_interval_ms (the size of the caller's result array; the
 * caller bounds it, e.g. by MaxReturnDataValues); 0 when start == end,
 * either time is outside [0, UA_AGG_TIME_MAX], or the interval is
 * negative, not finite or longer than UA_AGG_TIME_MAX.
 */
size_t ua_aggregate_intervals(ua_datetime start, ua_datetime end,
                              double processing_interval_ms);

/*
 * Run agg over in for [start, end) into out[0..n) where n is
 * ua_aggregate_intervals(start, end, processing_interval_ms).
 * UA_GOOD; BadAggregateNotSupported for an agg out of range;
 * BadAggregateInvalidInputs when n is 0 or out_len < n;
 * BadAggregateConfigurationRejected when a percentage is over 100.
 * O(n log(in->n + in->n_annotations)) plus the samples the intervals
 * hold (and the Bad runs a bound skips).
 */
ua_status ua_aggregate_run(enum ua_agg agg, const struct ua_agg_config *cfg,
                           const struct ua_agg_input *in, ua_datetime start,
                           ua_datetime end, double processing_interval_ms,
                           struct ua_agg_result *out, size_t out_len);

#endif
