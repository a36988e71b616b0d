#include "engine/generationhandle.h"

#include "engine/enginecontroller.h"

GenerationHandle::GenerationHandle(EngineController *engine, quint64 id)
    : QObject(engine), m_engine(engine), m_id(id)
{
}

void GenerationHandle::cancel()
{
    m_engine->cancel(m_id);
}
