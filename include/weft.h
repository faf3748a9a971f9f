/* weft.h: the umbrella header; includes every module header and nothing else. */
#ifndef WEFT_H
#define WEFT_H
#include "weft/base.h"
#include "weft/jobs.h"
/* ECS headers are added here as their modules land. */
#endif /* WEFT_H */
