/*
 * proto/version.h: product identity, used in BuildInfo, the application
 * description and --version.
 */
#ifndef UA_VERSION_H
#define UA_VERSION_H

#define UA_VERSION      "0.1.0"
#define UA_PRODUCT_NAME "uabroker"
#define UA_PRODUCT_URI  "urn:uabroker"
#define UA_MANUFACTURER "uabroker project"

#endif /* UA_VERSION_H */
