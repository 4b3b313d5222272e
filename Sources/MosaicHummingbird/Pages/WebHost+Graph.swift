internal import Mosaic
internal import MosaicKernel

extension WebHost {
    /// The module graph as SVG, coloured by state: the kernel's plan drawn as `mosaic graph --format svg --boot`
    /// draws it (service-inferred edges dotted, optional ones dashed).
    func graphSVG() async -> String {
        let states = await kernel.states.mapValues(\.name)
        return GraphDrawing(await kernel.moduleGraph, states: states).svg
    }
}
