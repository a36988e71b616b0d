// Constrained decoding for a request: response_format json_object / json_schema and forced
// tool calls become a waste::TokenConstraint, built on the engine thread (it needs the
// model's vocabulary) through GenerationRequest::makeConstraint.
#pragma once

#include "server/apirequest.h"
#include "generation/generationtypes.h"

// Empty when the request needs no constraint.
ConstraintFactory constraintFor(const ApiRequest &request);
