internal import Mosaic
internal import MosaicKernel

extension WebHost {
    /// The canvas of module `id` (what `ghost canvas ID --format html` prints), or a 404 page naming the modules.
    func canvasPage(_ id: String) async -> Page {
        let graph = await kernel.moduleGraph
        guard let canvas = ModuleCanvas(of: ModuleID(id), in: graph) else {
            let known = graph.ids.map(\.rawValue).joined(separator: ", ")
            return Page(
                status: 404, title: "Not found", tab: nil,
                main: "<h1>No module named “\(HTML.escape(id))”</h1><p>\(HTML.escape("The modules are: \(known)."))</p>"
            )
        }
        return Page(title: id, main: canvas.html)
    }
}
